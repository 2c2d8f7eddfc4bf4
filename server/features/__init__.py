"""Server features: each a small class with no-op hooks; server.py fans LSP events out to them."""
