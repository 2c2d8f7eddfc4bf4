"""The language server (DESIGN section 7): Ascend C diagnostics on open, change and save."""
