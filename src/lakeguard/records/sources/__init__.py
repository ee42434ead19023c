"""Sources: their definition rows (`rows.py`) and typed records
(`records.py`), one module per source kind (`kinds/`), and what a dataset has taken from them
(`progress.py`, its rows in `progress_rows.py`)."""
