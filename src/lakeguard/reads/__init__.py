"""The reads of the store: `StoreReader` (`reader.py`) composes the named queries, one
concern per module, each a mixin over `ReaderBase` (the store and its kept answers); a run's
definitions snapshot, re-validated, is the `Registry` (`registry.py`)."""
