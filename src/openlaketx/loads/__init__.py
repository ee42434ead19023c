"""Load strategies: append, overwrite, merge; one tagged idempotent commit each."""
