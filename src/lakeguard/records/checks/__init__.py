"""Checks: the rules' and policies' definition rows (`rule_rows.py`)
and what a batch's checks found (`result_rows.py`)."""
