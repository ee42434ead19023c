"""Ordering of job tasks by their dependencies (pure)."""

from __future__ import annotations

from graphlib import CycleError as _GraphCycle
from graphlib import TopologicalSorter


class CycleError(ValueError):
    """The task graph has a cycle."""


def order_tasks(depends_on: dict[str, list[str]]) -> list[str]:
    """Task ids in an order that runs every task after its dependencies.

    Ties keep declaration order, so a job without dependencies runs as written.
    """
    position = {task: i for i, task in enumerate(depends_on)}
    sorter = TopologicalSorter(
        {t: [d for d in deps if d in depends_on] for t, deps in depends_on.items()}
    )
    try:
        sorter.prepare()
    except _GraphCycle as exc:
        cycle = " -> ".join(exc.args[1]) if len(exc.args) > 1 else "?"
        raise CycleError(f"tasks depend on each other in a cycle: {cycle}") from exc
    ordered: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        ordered += ready
        sorter.done(*ready)
    return ordered
