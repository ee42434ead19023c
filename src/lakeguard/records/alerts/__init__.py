"""Alerts: channel and route rows (`channel_rows.py`), incident event
and delivery rows (`event_rows.py`), their typed records (`records.py`) and the kinds of
notification channel (`channels/`)."""
