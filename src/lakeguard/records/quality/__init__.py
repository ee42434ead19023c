"""What a quality rule compiles to and what it found (pure)."""
