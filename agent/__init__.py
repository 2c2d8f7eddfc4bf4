"""The SAGE agent loop: DESIGN section 6. Not built yet (issue 5)."""
