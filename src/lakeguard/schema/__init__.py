"""Schema capture and fingerprint."""
