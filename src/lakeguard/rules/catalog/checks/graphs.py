"""Checks of the graphs a document declares: each job's tasks (known, unique, acyclic, a
valid schedule) and the datasets' lineage (no dataset reads itself)."""

from __future__ import annotations

from typing import Any

from croniter import croniter

from lakeguard.rules.catalog.checks.ids import duplicates
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.catalog.sql_models import model_parents
from lakeguard.words.planning import CycleError, order_tasks
from lakeguard.words.problems import Problem


def check_jobs(doc: MetadataDocument) -> list[Problem]:
    """Each job's problems: its schedule, its tasks' datasets and dependencies, cycles."""
    problems: list[Problem] = []
    datasets = {d.id for d in doc.datasets}
    for i, job in enumerate(doc.jobs):
        loc: tuple[Any, ...] = ("jobs", i)
        if job.schedule and not croniter.is_valid(job.schedule):
            problems.append(
                Problem((*loc, "schedule"), f"invalid cron expression {job.schedule!r}")
            )
        problems += duplicates(f"jobs[{i}].tasks", [t.id for t in job.tasks])
        task_ids = {t.id for t in job.tasks}
        for j, task in enumerate(job.tasks):
            if task.dataset not in datasets:
                problems.append(
                    Problem((*loc, "tasks", j, "dataset"), f"unknown dataset {task.dataset!r}")
                )
            for dep in task.depends_on:
                if dep not in task_ids:
                    problems.append(
                        Problem((*loc, "tasks", j, "depends_on"), f"unknown task {dep!r}")
                    )
        try:
            order_tasks({t.id: list(t.depends_on) for t in job.tasks})
        except CycleError as exc:
            problems.append(Problem((*loc, "tasks"), str(exc)))
    return problems


def check_lineage(doc: MetadataDocument) -> list[Problem]:
    """Datasets must not read themselves, directly or through others."""
    ids = {d.id for d in doc.datasets}
    graph = {d.id: [p for p in model_parents(d, ids) if p in ids] for d in doc.datasets}
    try:
        order_tasks(graph)
    except CycleError as exc:
        return [Problem(("datasets",), str(exc).replace("tasks", "datasets"))]
    return []
