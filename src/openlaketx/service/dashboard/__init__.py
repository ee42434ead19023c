"""The dashboard served at `/` by `laketx serve` (pages.py)."""
