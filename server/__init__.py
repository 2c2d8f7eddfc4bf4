"""The language server: LSP in, features behind one registration site (server.py)."""
