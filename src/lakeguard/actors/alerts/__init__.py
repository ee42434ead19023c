"""Alerting: who is told what the control plane decided (docs/alerts.md).

`routing.py` says which routes (and so which channels) an event goes to; `outbox.py` records
events once (their ids derived from the rows that caused them) and `deliveries.py` claims and
records each delivery of one to a channel. The kinds of channel are declared in
`lakeguard.records.alerts.channels`; which run rows are events, their words and their incidents
in `lakeguard.rules.alerts`. Nothing here sends anything: `openlaketx.service.notify` does,
through the tenant's reach.
"""
