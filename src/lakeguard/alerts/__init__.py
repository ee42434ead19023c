"""Alerting: who is told what the control plane decided (docs/alerts.md).

`channels/` declares the kinds of notification channel (webhook, slack, email), one module
each; `events.py` says which run rows are events and what each one tells; `routing.py` which
routes (and so which channels) an event goes to; `incidents.py` folds the `incident_events`
rows into incidents; `outbox.py` records events once (their ids derived from the rows that
caused them) and `deliveries.py` claims and records each delivery of one to a channel.
Nothing here sends anything: `openlaketx.service.notify` does, through the tenant's reach.
"""
