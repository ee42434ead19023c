"""Definitions and rules: metadata as code, rule kinds, policies, alert events (pure; above the
store, below the reads)."""
