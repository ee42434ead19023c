"""The reads of the store: `StoreReader` (`reader.py`) is one reader per concept
(`reader.runs`, `reader.decisions`, ...), one module each, over `ReaderBase` (the store and its
kept answers); a run's definitions snapshot, re-validated, is the `Registry` (`registry.py`)."""
