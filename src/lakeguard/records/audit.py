"""`verify`: a store audited against the invariants of docs/design.md §4 (pure).

The audit takes the typed rows of the metadata tables and the commit histories of the dataset
tables and of the append-only metadata tables, and returns every violation it finds, each with
the invariant it breaks, where, what and how to fix it. An empty list means every invariant
holds. Reading the data is the store reader's job (`StoreReader.audit.audit_data`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from lakeguard.records.commits import Commit
from lakeguard.records.quarantine import BATCH, HeldPart, HoldState, Judged, plan, unwanted
from lakeguard.records.sources.kinds import MARKS
from lakeguard.records.sources.progress import key_of, same_file, still_rejected
from lakeguard.words.vocabulary import EventStatus

if TYPE_CHECKING:  # the store's reader imports this module: rows are types here, not imports
    from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
    from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
    from lakeguard.records.sources.progress_rows import RejectedFileRow, SourceProgressRow

STALE_AFTER = timedelta(hours=12)
# What may happen to an append-only table: appends, and changes that rewrite no row.
_APPEND_OPERATIONS = frozenset({"WRITE", "STREAMING UPDATE", "CREATE TABLE"})


@dataclass(frozen=True)
class Violation:
    invariant: int  # the number in docs/design.md §4
    check: str
    where: str
    what: str
    fix: str


@dataclass(frozen=True)
class AuditData:
    events: list[RunEventRow]
    attempts: list[RunHistoryRow]
    job_runs: list[PipelineRunRow]
    versions: list[DataVersionRow]
    decisions: list[DecisionRow]
    datasets: dict[str, str]  # dataset id -> table name
    commits: dict[str, list[Commit]]  # dataset id -> its table's commits
    append_only: dict[str, tuple[list[Commit], Mapping[str, str | None]]] = field(
        default_factory=dict
    )  # runtime table -> (commits, configuration)
    now: datetime = field(default_factory=datetime.now)
    rejected: list[RejectedFileRow] = field(default_factory=list)  # rejected_files, every row
    # dataset id -> its approved marks (the newest of each key), for datasets with rejections
    taken: dict[str, list[SourceProgressRow]] = field(default_factory=dict)
    # dataset id -> each attempt's part of its quarantine table (read by the engine's side:
    # the table is a data table; lakeguard.records.quarantine)
    quarantine: dict[str, list[HeldPart]] = field(default_factory=dict)


def only(data: AuditData, datasets: set[str]) -> AuditData:
    """The audit data of some datasets (their attempts, versions, decisions and commits)."""
    return replace(
        data,
        events=[e for e in data.events if e.dataset_id in datasets],
        attempts=[a for a in data.attempts if a.dataset_id in datasets],
        job_runs=[],
        versions=[v for v in data.versions if v.dataset_id in datasets],
        decisions=[d for d in data.decisions if d.dataset_id in datasets],
        datasets={d: t for d, t in data.datasets.items() if d in datasets},
        commits={d: c for d, c in data.commits.items() if d in datasets},
        rejected=[r for r in data.rejected if r.dataset_id in datasets],
        taken={d: m for d, m in data.taken.items() if d in datasets},
        quarantine={d: p for d, p in data.quarantine.items() if d in datasets},
    )


def audit(data: AuditData, is_dead: Callable[[str | None], bool]) -> list[Violation]:
    """Every violation of the invariants in `data` (empty: the store is sound)."""
    return [
        *_terminal_rows(data, is_dead),
        *_versions(data),
        *_commits(data),
        *_append_only(data),
        *_rejected_files(data),
        *_quarantine_once(data),
    ]


def _terminal_rows(data: AuditData, is_dead: Callable[[str | None], bool]) -> list[Violation]:
    """Invariant 4: one terminal row per attempt and per job run; none left running."""
    found: list[Violation] = []
    terminal = {
        "run_history": Counter(r.run_id for r in data.attempts),
        "pipeline_runs": Counter(r.pipeline_logging_id for r in data.job_runs),
    }
    started: dict[str, RunEventRow] = {}
    for event in data.events:
        if event.status == EventStatus.RUNNING:
            started.setdefault(event.run_id, event)
    for run_id, event in started.items():
        table = "run_history" if event.dataset_id else "pipeline_runs"
        count = terminal[table][run_id]
        what = f"attempt at {event.dataset_id}" if event.dataset_id else "job run"
        if count > 1:
            found.append(
                Violation(
                    4,
                    "one_terminal_row",
                    f"{table}[run_id={run_id}]",
                    f"{what} {run_id} has {count} terminal rows",
                    "terminal rows are appended once by the run or the reaper; find the writer "
                    "that appended the others",
                )
            )
        elif count == 0:
            age = data.now - event.event_time
            if age > STALE_AFTER or is_dead(event.worker_instance):
                found.append(
                    Violation(
                        4,
                        "left_running",
                        f"run_events[run_id={run_id}]",
                        f"{what} {run_id} started {event.event_time:%Y-%m-%d %H:%M} on "
                        f"{event.worker_instance} and never ended",
                        "run `laketx reap` to record it FAILED",
                    )
                )
    return found


def _versions(data: AuditData) -> list[Violation]:
    """Invariants 3 and 5: versions 1..n per dataset, each with its allowed decision."""
    found: list[Violation] = []
    allowed = {(d.dataset_id, d.run_id): d for d in data.decisions if d.allowed}
    by_dataset: dict[str, list[DataVersionRow]] = defaultdict(list)
    for v in data.versions:
        by_dataset[v.dataset_id].append(v)
    for dataset_id, versions in by_dataset.items():
        numbers = sorted(v.version for v in versions)
        if numbers != list(range(1, len(numbers) + 1)):
            found.append(
                Violation(
                    3,
                    "versions_increasing",
                    f"data_versions[dataset_id={dataset_id}]",
                    f"{dataset_id}'s versions are {numbers}, not 1..{len(numbers)}",
                    "versions are appended by the gate only; restore data_versions from its Delta "
                    "history (time travel) to the last sound version",
                )
            )
        if dataset_id not in data.datasets:
            found.append(
                Violation(
                    1,
                    "registered",
                    f"data_versions[dataset_id={dataset_id}]",
                    f"{dataset_id} has versions but is not registered",
                    "register the dataset again (apply its document), or accept that it is gone",
                )
            )
        for v in versions:
            decision = allowed.get((dataset_id, v.run_id))
            if decision is None:
                found.append(
                    Violation(
                        5,
                        "version_has_decision",
                        f"data_versions[{dataset_id} v{v.version}]",
                        f"version {v.version} of {dataset_id} (run {v.run_id}) has no "
                        "allowed decision in promotion_status",
                        "a version without its decision was not promoted by the gate: restore the "
                        "table and data_versions to the last version with a decision",
                    )
                )
            elif not decision.evidence:
                found.append(
                    Violation(
                        5,
                        "decision_has_evidence",
                        f"promotion_status[run_id={v.run_id}]",
                        f"the decision behind version {v.version} of {dataset_id} has no evidence",
                        "decisions are recorded with their rule outcomes; re-run the dataset to "
                        "record a decision with evidence",
                    )
                )
    return found


def _commits(data: AuditData) -> list[Violation]:
    """Invariants 7 and 8: each version is a tagged commit; no commit without a version."""
    found: list[Violation] = []
    by_dataset: dict[str, dict[int, DataVersionRow]] = defaultdict(dict)
    for v in data.versions:
        by_dataset[v.dataset_id][int(v.snapshot_ref)] = v
    for dataset_id, commits in data.commits.items():
        table = data.datasets.get(dataset_id, dataset_id)
        recorded = by_dataset.get(dataset_id, {})
        index = {c.version: c for c in commits}
        for ref, v in sorted(recorded.items()):
            commit = index.get(ref)
            tag = commit.tag if commit else None
            if commit is None or tag is None:
                found.append(
                    Violation(
                        7,
                        "version_has_commit",
                        f"{table}@{ref}",
                        f"version {v.version} of {dataset_id} names commit {ref}, which "
                        + ("does not exist" if commit is None else "carries no laketx tag"),
                        "the table was replaced or rewritten behind the gate: restore it from a "
                        "backup, or re-run the dataset into a fresh table",
                    )
                )
            elif tag.data_version != v.version or tag.run_id != v.run_id:
                found.append(
                    Violation(
                        7,
                        "commit_matches_version",
                        f"{table}@{ref}",
                        f"commit {ref} is tagged for version {tag.data_version} by run "
                        f"{tag.run_id}, but version {v.version} was recorded for run "
                        f"{v.run_id}",
                        "data_versions and the table disagree: restore both to the last version "
                        "where they agree",
                    )
                )
        for commit in commits:
            if commit.version in recorded or commit.maintenance:
                continue
            if commit.tag is not None:
                found.append(
                    Violation(
                        7,
                        "orphan_commit",
                        f"{table}@{commit.version}",
                        f"commit {commit.version} ({commit.operation}) of run "
                        f"{commit.tag.run_id} was published but no version records it",
                        f"run {dataset_id} again: the next run records (adopts) it first",
                    )
                )
            else:
                found.append(
                    Violation(
                        8,
                        "commit_around_the_gate",
                        f"{table}@{commit.version}",
                        f"commit {commit.version} ({commit.operation}) was made around the gate: "
                        "no decision approved it, and the next promotion would build on it",
                        f"RESTORE TABLE {table} TO VERSION AS OF the last approved snapshot, or "
                        "deliver the change through a source",
                    )
                )
    return found


def _append_only(data: AuditData) -> list[Violation]:
    """Invariant 3: append-only tables keep `delta.appendOnly` and are never rewritten, but by
    a store migration (`laketx migrate`, its commits marked)."""
    found: list[Violation] = []
    for table, (commits, config) in data.append_only.items():
        if str(config.get("delta.appendOnly", "")).lower() != "true":
            found.append(
                Violation(
                    3,
                    "append_only_property",
                    f"metadata table {table}",
                    f"{table} no longer has delta.appendOnly = true",
                    f"ALTER TABLE ... SET TBLPROPERTIES ('delta.appendOnly' = 'true') on {table}, "
                    "then check its history for rewrites",
                )
            )
        for commit in commits:
            mode = str(commit.parameters.get("mode", "Append")).lower()
            rewrite = commit.operation not in _APPEND_OPERATIONS or mode not in ("append", "")
            if rewrite and not commit.maintenance and commit.migration is None:
                found.append(
                    Violation(
                        3,
                        "append_only_rewritten",
                        f"metadata table {table}@{commit.version}",
                        f"{table} was rewritten by commit {commit.version} ({commit.operation})",
                        f"restore {table} from its Delta history to the version before "
                        f"{commit.version}",
                    )
                )
    return found


def _rejected_files(data: AuditData) -> list[Violation]:
    """Invariants 1 and 9: a file still rejected (neither released nor changed since) belongs
    to a registered dataset, and no approved batch took it as it was rejected: a delivered
    file is loaded once or put aside, never both."""
    found: list[Violation] = []
    for row in still_rejected(data.rejected, {}):  # releases count, later takes are checked
        where = f"rejected_files[{row.dataset_id}: {row.path}]"
        if row.dataset_id not in data.datasets:
            found.append(
                Violation(
                    1,
                    "registered",
                    where,
                    f"{row.path} is rejected for {row.dataset_id}, which is not registered",
                    "register the dataset again (apply its document), or release the file: "
                    f"laketx files release {row.path}",
                )
            )
            continue
        mark = MARKS.get(row.kind)
        if mark is None or not row.state:
            continue  # a kind this laketx does not know: nothing to compare
        rejected = mark.model_validate_json(row.state)
        for taken in data.taken.get(row.dataset_id, []):
            same_key = (taken.source_object_id, taken.kind, key_of(taken)) == (
                row.source_object_id,
                row.kind,
                row.path,
            )
            if not same_key or not taken.state:
                continue
            if same_file(rejected, mark.model_validate_json(taken.state)):
                found.append(
                    Violation(
                        9,
                        "rejected_or_taken",
                        where,
                        f"{row.path} is both rejected (run {row.run_id}: {row.reason}) and "
                        f"taken, unchanged, by the approved batch of run {taken.run_id}",
                        "a file is loaded or put aside, never both: if its rows are in "
                        f"{row.dataset_id}, release it (laketx files release {row.path}); if "
                        "not, deliver it again under a new name",
                    )
                )
    return found


def _quarantine_once(data: AuditData) -> list[Violation]:
    """Invariant 6: a quarantine holds each held batch once, and no batch promoted since
    (lakeguard.records.quarantine): one held again by a later attempt, or promoted by one, has
    left."""
    found: list[Violation] = []
    by_dataset: dict[str, list[DecisionRow]] = defaultdict(list)
    for decision in data.decisions:
        by_dataset[decision.dataset_id].append(decision)
    for dataset_id, parts in data.quarantine.items():
        present = {p.run_id for p in parts if p.part == BATCH}
        holds = plan((Judged.from_row(d) for d in by_dataset.get(dataset_id, [])), present)
        for part in unwanted(parts, holds):
            hold = holds[part.run_id]
            how = "held again" if hold.state == HoldState.SUPERSEDED else "promoted"
            found.append(
                Violation(
                    6,
                    "quarantine_once",
                    f"quarantine.{dataset_id}[run {part.run_id}]",
                    f"the batch held by run {part.run_id} ({part.rows} rows) is still in "
                    f"quarantine, though run {hold.by} {how} it since: its rows count twice",
                    "run `laketx migrate` (or the dataset again): it removes the batches held "
                    "again or promoted since from quarantine",
                )
            )
    return found
