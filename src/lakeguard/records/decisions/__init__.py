"""The gate's decisions and the versions it approved: their rows
(`rows.py`) and typed records (`records.py`; versions and status in `versions.py`)."""
