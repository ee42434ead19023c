"""Each dataset's status and trust score: the overview a service shows, with what stuck
detection needs of the decisions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lakeguard.reads.base import ReaderBase
from lakeguard.reads.definitions import DefinitionReads
from lakeguard.records.checks.result_rows import RuleResultRow, SchemaChangeRow
from lakeguard.records.checks.rule_rows import PolicyRuleRow
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.decisions.versions import DatasetStatus
from lakeguard.records.definitions.datasets import DatasetRow
from lakeguard.records.definitions.records import PolicyDef
from lakeguard.records.evidence import Evidence
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.runs.rows import RunHistoryRow
from lakeguard.records.stuck import Blocked, Stuck, stuck
from lakeguard.records.trust import (
    RECENT,
    Lineage,
    PromotedBatch,
    RuleJudgment,
    TrustScore,
    trust_score,
)
from lakeguard.rules.policy.sla import sla_hours
from lakeguard.store.store import MetadataStore
from lakeguard.words.vocabulary import AttemptStatus, Layer

_LAYER_ORDER = {layer.value: layer.rank for layer in Layer}


Row = TypeVar("Row", bound=Mapping[str, Any])


def _latest(rows: Iterable[Row], key: str, order: str) -> dict[str, Row]:
    """The row with the greatest `order` per `key` value (of a few columns read: a projection
    is a plain row)."""
    best: dict[str, Row] = {}
    for row in rows:
        current = best.get(row[key])
        if current is None or row[order] > current[order]:
            best[row[key]] = row
    return best


def _trailing_blocked(decisions: list[DecisionRow]) -> dict[str, list[Blocked]]:
    """Each dataset's decisions since its last allowed one (that one included), oldest first:
    all that stuck detection looks at, without parsing the evidence of every decision ever."""
    by_dataset: dict[str, list[DecisionRow]] = {}
    for row in sorted(decisions, key=lambda r: r.evaluated_at):
        by_dataset.setdefault(row.dataset_id, []).append(row)
    trailing = {}
    for dataset_id, rows in by_dataset.items():
        start = max((i for i, r in enumerate(rows) if r.allowed), default=0)
        trailing[dataset_id] = [Blocked.from_row(r) for r in rows[start:]]
    return trailing


D = TypeVar("D", SchemaChangeRow, DataVersionRow, DecisionRow, RunHistoryRow, RuleResultRow)


def _by_dataset(rows: list[D]) -> dict[str, list[D]]:
    found: dict[str, list[D]] = {}
    for row in rows:
        found.setdefault(row.dataset_id, []).append(row)
    return found


def _of(kind: type[D], rows: Sequence[RuntimeRow]) -> list[D]:
    return [r for r in rows if isinstance(r, kind)]


def _promoted_batches(
    decisions: Sequence[DecisionRow], results: Sequence[RuleResultRow]
) -> list[tuple[str, PromotedBatch]]:
    """Each promoted decision as trust reads it, (dataset id, batch): its rules as they judged
    (a threshold unknown when the row predates it), those whose failing rows it dropped."""
    by_run: dict[str, list[RuleResultRow]] = {}
    for row in results:
        by_run.setdefault(row.run_id, []).append(row)
    found = []
    for decision in decisions:
        dropped = set(Evidence.from_json(decision.evidence).dropped_rules)
        rules = tuple(
            RuleJudgment(
                failed_rows=r.failed_rows,
                rows_evaluated=r.rows_evaluated,
                severity=r.severity,
                threshold=r.threshold,
                dropped=r.rule_id in dropped,
            )
            for r in by_run.get(decision.run_id, [])
        )
        batch = PromotedBatch(
            run_id=decision.run_id, evaluated_at=decision.evaluated_at, rules=rules
        )
        found.append((decision.dataset_id, batch))
    return found


def _by_dataset_id(pairs: list[tuple[str, PromotedBatch]]) -> dict[str, list[PromotedBatch]]:
    found: dict[str, list[PromotedBatch]] = {}
    for dataset_id, batch in pairs:
        found.setdefault(dataset_id, []).append(batch)
    return found


def _summary(found: Stuck | None) -> str | None:
    return found.summary() if found else None


class StatusReads(ReaderBase):
    """Each dataset's latest version, latest attempt, trust score and whether it is stuck."""

    def __init__(self, store: MetadataStore, definitions: DefinitionReads) -> None:
        super().__init__(store)
        self._definitions = definitions

    def datasets(self) -> list[DatasetStatus]:
        """Each registered dataset with its latest approved version and its latest attempt."""
        return self._memo("status", lambda: tuple(self._status()))

    def _status(self) -> list[DatasetStatus]:
        with ThreadPoolExecutor(max_workers=3) as pool:
            datasets_f = pool.submit(self._definitions.datasets)
            # each dataset's newest row only, picked by DataFusion: flat as history grows
            versions_f = pool.submit(
                self._store.rows,
                "data_versions",
                columns=["dataset_id", "version", "snapshot_ref", "row_count", "promoted_at"],
                newest_first="version",
                limit=1,
                per="dataset_id",
            )
            history_f = pool.submit(
                self._store.rows,
                "run_history",
                columns=["dataset_id", "status", "end_time", "error_message"],
                newest_first="end_time",
                limit=1,
                per="dataset_id",
            )
            decisions_f = pool.submit(self._trailing_decisions)
            versions = _latest(versions_f.result(), "dataset_id", "version")
            history = _latest(history_f.result(), "dataset_id", "end_time")
            datasets = datasets_f.result()
            decided = _trailing_blocked(decisions_f.result())
        trust = self.trust_all()
        out = []
        for ds in sorted(datasets, key=lambda d: (_LAYER_ORDER.get(d.layer, 9), d.dataset_id)):
            v, h = versions.get(ds.dataset_id, {}), history.get(ds.dataset_id, {})
            out.append(
                DatasetStatus(
                    dataset_id=ds.dataset_id,
                    layer=ds.layer,
                    table_name=ds.table_name,
                    version=v.get("version"),
                    snapshot_ref=v.get("snapshot_ref"),
                    row_count=v.get("row_count"),
                    promoted_at=v.get("promoted_at"),
                    last_status=AttemptStatus(h["status"]) if h.get("status") else None,
                    last_run_at=h.get("end_time"),
                    last_error=h.get("error_message"),
                    trust=trust[ds.dataset_id].score,
                    stuck=_summary(stuck(decided.get(ds.dataset_id, []))),
                )
            )
        return out

    def _trailing_decisions(self) -> list[DecisionRow]:
        """Each dataset's last allowed decision and the blocked ones after it (all of a dataset
        never allowed): what `_trailing_blocked` keeps, without reading every decision ever."""
        store = self._store
        last_allowed = store.read(
            DecisionRow,
            filters=[("allowed", "=", True)],
            newest_first="evaluated_at",
            limit=1,
            per="dataset_id",
        )
        since = {r.dataset_id: r.evaluated_at for r in last_allowed}
        blocked: list[tuple[str, str, Any]] = [("allowed", "=", False)]
        after = (
            store.read(DecisionRow, filters=[*blocked, ("evaluated_at", ">=", min(since.values()))])
            if since
            else []
        )
        rows = [
            *last_allowed,
            *(r for r in after if r.dataset_id in since and r.evaluated_at >= since[r.dataset_id]),
        ]
        seen = [
            r["dataset_id"]
            for r in store.rows(
                "promotion_status",
                columns=["dataset_id"],
                newest_first="evaluated_at",
                limit=1,
                per="dataset_id",
            )
        ]
        never = [d for d in seen if d not in since]
        if never:
            rows += store.read(DecisionRow, filters=[*blocked, ("dataset_id", "in", never)])
        return rows

    def trust_all(self) -> dict[str, TrustScore]:
        """Every dataset's trust score and its components, kept as `status` keeps its answer
        (until a table changes or the minute turns): a page asks for one dataset's after the
        overview asked for all."""
        return dict(self._memo("trust_all", lambda: tuple(self.trust().items())))

    def trust(
        self, dataset_ids: Sequence[str] | None = None, pending: Sequence[RuntimeRow] = ()
    ) -> dict[str, TrustScore]:
        """Each dataset's trust score and its components (see lakeguard.records.trust). `pending`:
        rows about to be committed (an attempt's evidence), scored as if they were stored, so
        that the score can be committed with them."""
        store = self._store
        ids = (
            list(dataset_ids)
            if dataset_ids is not None
            else [d.dataset_id for d in self._definitions.datasets()]
        )
        only: list[tuple[str, str, Any]] = [("dataset_id", "in", ids)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            promoted_f = pool.submit(  # the score looks at the last RECENT promotions only
                store.read,
                DecisionRow,
                filters=[*only, ("allowed", "=", True)],
                newest_first="evaluated_at",
                limit=RECENT,
                per="dataset_id",
            )
            changes_f = pool.submit(store.read, SchemaChangeRow, filters=only)
            attempts_f = pool.submit(  # how many of the last RECENT attempts not held failed
                store.rows,
                "run_history",
                filters=[*only, ("status", "!=", str(AttemptStatus.BLOCKED))],
                columns=["dataset_id", "status", "end_time"],
                newest_first="end_time",
                limit=RECENT,
                per="dataset_id",
            )
            # lineage and freshness count every version: DataFusion counts, one row each
            lineage_f = pool.submit(store.lineage, ids)
            policies_f = pool.submit(store.definitions, PolicyRuleRow)
            layers_f = pool.submit(store.definitions, DatasetRow, [("dataset_id", "in", ids)])
            decided = promoted_f.result()
            runs = [d.run_id for d in decided]
            results = store.read(RuleResultRow, filters=[("run_id", "in", runs)]) if runs else []
            promoted = _by_dataset_id(
                _promoted_batches(decided, [*results, *_of(RuleResultRow, pending)])
            )
            changes = _by_dataset([*changes_f.result(), *_of(SchemaChangeRow, pending)])
            lineage = lineage_f.result()
            policies = [PolicyDef.from_row(r) for r in policies_f.result()]
            layers = {r.dataset_id: r.layer for r in layers_f.result()}
            attempts = sorted(
                [
                    *((r["dataset_id"], r["end_time"], r["status"]) for r in attempts_f.result()),
                    *(
                        (r.dataset_id, r.end_time, r.status)
                        for r in _of(RunHistoryRow, pending)
                        if r.status != AttemptStatus.BLOCKED
                    ),
                ],
                key=lambda a: a[1],
                reverse=True,
            )
            failed: dict[str, int] = {}
            seen: dict[str, int] = {}
            for dataset_id, _, status in attempts:
                seen[dataset_id] = seen.get(dataset_id, 0) + 1
                if seen[dataset_id] <= RECENT and status == AttemptStatus.FAILED:
                    failed[dataset_id] = failed.get(dataset_id, 0) + 1

        now = store.now()
        return {
            d: trust_score(
                d,
                promoted=promoted.get(d, []),
                changes=changes.get(d, []),
                lineage=lineage.get(d, Lineage()),
                now=now,
                sla_hours=sla_hours(policies, layers[d]) if d in layers else None,
                failed=failed.get(d, 0),
            )
            for d in ids
        }
