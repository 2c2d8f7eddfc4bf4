"""The pygls language server: DESIGN section 7. Not built yet (issue 6)."""
