"""A run: its rows (`rows.py`), the leases and requests that coordinate
runs (`coordination.py`) and its typed records (`records.py`)."""
