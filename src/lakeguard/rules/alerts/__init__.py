"""Which run rows are alert events, their text, their incidents (pure)."""
