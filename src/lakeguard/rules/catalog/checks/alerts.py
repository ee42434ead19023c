"""Checks of the notification channels and routes: each route names a channel and datasets
of the document, and a WARN route says the share it is told at."""

from __future__ import annotations

from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import AlertEvent


def check_alerts(doc: MetadataDocument) -> list[Problem]:
    problems: list[Problem] = []
    channels = {c.id for c in doc.notification_channels}
    datasets = {d.id for d in doc.datasets}
    for i, route in enumerate(doc.notification_routes):
        loc = ("notification_routes", i)
        if route.channel not in channels:
            known = ", ".join(sorted(channels)) or "none declared"
            problems.append(
                Problem((*loc, "channel"), f"unknown channel {route.channel!r} (known: {known})")
            )
        for j, dataset in enumerate(route.datasets):
            if dataset not in datasets:
                problems.append(Problem((*loc, "datasets", j), f"unknown dataset {dataset!r}"))
        if AlertEvent.WARN in route.events and route.warn_share is None:
            problems.append(
                Problem(
                    (*loc, "warn_share"),
                    "a route that sends WARN events says at which failing share (warn_share)",
                )
            )
    return problems
