"""Reads of the gate's decisions with their rule outcomes, schema changes, trust and advice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from lakeguard.reads.base import ReaderBase
from lakeguard.reads.status import StatusReads
from lakeguard.reads.versions import VersionReads
from lakeguard.records.checks.result_rows import RuleResultRow, SchemaChangeRow
from lakeguard.records.checks.rule_rows import QualityRuleRow
from lakeguard.records.decisions.records import DecisionRecord, RuleResult, SchemaChange
from lakeguard.records.decisions.rows import DecisionRow
from lakeguard.records.definitions.records import RuleDef
from lakeguard.records.judged import (
    UNKNOWN,
    JudgedAs,
    Known,
    canonical_expression,
    expression_of,
    in_force,
)
from lakeguard.records.quarantine import Judged
from lakeguard.records.stuck import Blocked, stuck
from lakeguard.rules.explain import advise
from lakeguard.rules.quality.kinds import stored_rule
from lakeguard.store import deltars
from lakeguard.store.store import MetadataStore
from lakeguard.words.errors import ValidationError


class DecisionReads(ReaderBase):
    """Gate decisions and the rule results they were made on."""

    def __init__(self, store: MetadataStore, versions: VersionReads, status: StatusReads) -> None:
        super().__init__(store)
        self._versions = versions
        self._status = status

    def rule_results(self, run_ids: Sequence[str]) -> dict[str, tuple[RuleResult, ...]]:
        """Rule outcomes of the given dataset attempts, by run id, in rule order."""
        if not run_ids:
            return {}
        rows = self._store.read(RuleResultRow, filters=[("run_id", "in", list(run_ids))])
        rows.sort(key=lambda r: (r.executed_at, r.rule_id))
        results = [RuleResult.from_row(row) for row in rows]
        if any(r.known == Known.UNKNOWN for r in results):
            history = self._definitions_then([row for row in rows if row.threshold is None])
            results = [
                r.judged_from(history[(row.dataset_id, row.rule_id, row.executed_at)])
                if r.known == Known.UNKNOWN
                else r
                for r, row in zip(results, rows, strict=True)
            ]
        found: dict[str, list[RuleResult]] = {}
        for row, result in zip(rows, results, strict=True):
            found.setdefault(row.run_id, []).append(result)
        return {k: tuple(v) for k, v in found.items()}

    def _definitions_then(
        self, rows: Sequence[RuleResultRow]
    ) -> dict[tuple[str, str, datetime], JudgedAs]:
        """What each rule of `rows` (results recorded before their rule's definition was) was
        when it judged: `quality_rules` as it stood then, each version read once. A rule not
        found then, or a table without that history, is unknown, never today's."""
        store = self._store
        location = store.location("quality_rules")
        commits = [
            (int(h["version"]), int(h["timestamp"]))
            for h in deltars.history("quality_rules", location, limit=None)
            if h.get("timestamp") is not None
        ]
        wanted = {(r.dataset_id, r.rule_id, r.executed_at) for r in rows}
        versions = {key: in_force(commits, key[2]) for key in wanted}
        read: dict[tuple[int, str], dict[str, RuleDef]] = {}
        for (dataset_id, _, _), version in versions.items():
            if version is None or (version, dataset_id) in read:
                continue
            found = store.definitions(
                QualityRuleRow, [("dataset_id", "=", dataset_id)], version=version
            )
            read[(version, dataset_id)] = {d.rule_id: RuleDef.from_row(d) for d in found}
        out = {}
        for key, version in versions.items():
            stored = None if version is None else read[(version, key[0])].get(key[1])
            out[key] = UNKNOWN if stored is None else _as_judged(stored)
        return out

    def decisions(
        self,
        *,
        dataset_id: str | None = None,
        run_ids: Sequence[str] | None = None,
        last: int | None = None,
    ) -> list[DecisionRecord]:
        """Gate decisions (oldest first) of a dataset or of some attempts, with rule results;
        only the newest `last` of them when given (only their rule results are read)."""
        filters: list[tuple[str, str, Any]] = []
        if dataset_id is not None:
            filters.append(("dataset_id", "=", dataset_id))
        if run_ids is not None:
            if not run_ids:
                return []
            filters.append(("run_id", "in", list(run_ids)))
        rows = sorted(self._store.read(DecisionRow, filters=filters), key=lambda r: r.evaluated_at)
        if last is not None:
            rows = rows[-last:] if last > 0 else []
        results = self.rule_results([r.run_id for r in rows])
        return [DecisionRecord.from_row(r, results.get(r.run_id, ())) for r in rows]

    def judgments(self, dataset_id: str, held: Sequence[str]) -> list[Judged]:
        """The dataset's decisions its quarantine's plan needs (lakeguard.records.quarantine): those
        from the oldest of the `held` attempts (whose batches its table holds) on."""
        if not held:
            return []
        rows = self._store.read(DecisionRow, filters=[("run_id", "in", list(held))])
        if not rows:
            return []
        since = min(r.evaluated_at for r in rows)
        later = self._store.read(
            DecisionRow,
            filters=[("dataset_id", "=", dataset_id), ("evaluated_at", ">=", since)],
        )
        return [Judged.from_row(r) for r in later]

    def latest_decision(self, dataset_id: str, run_id: str | None = None) -> DecisionRecord | None:
        """A dataset's latest decision (or the one of attempt `run_id`), with everything that
        took part: rule outcomes, checks and policies, schema changes, the version made."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if run_id is not None:
            filters.append(("run_id", "=", run_id))
        rows = self._store.read(DecisionRow, filters=filters)
        if not rows:
            return None
        latest = max(rows, key=lambda r: r.evaluated_at)
        if run_id is not None:  # the dataset's whole record says whether it is stuck now
            rows = self._store.read(DecisionRow, filters=filters[:1])
        attempt = latest.run_id
        results = self.rule_results([attempt])
        changes = self._store.read(SchemaChangeRow, filters=[("run_id", "=", attempt)])
        version = next(
            (v.version for v in self._versions.versions(dataset_id) if v.run_id == attempt), None
        )
        record = DecisionRecord.from_row(latest, results.get(attempt, ()))
        decided = replace(
            record,
            schema_changes=tuple(SchemaChange.from_row(c) for c in changes),
            version=version,
        )
        score = self._status.trust([dataset_id])[dataset_id]
        blocked = stuck(sorted((Blocked.from_row(r) for r in rows), key=lambda b: b.evaluated_at))
        advice = advise(decided)
        if blocked is not None and not decided.allowed:
            advice.insert(0, blocked.fix())
        return replace(
            decided,
            advice=tuple(advice),
            trust=score,
            stuck=blocked.summary() if blocked else None,
            # what each rule asked when it judged this batch, not what it asks today
            asks={r.rule_id: r.asks for r in decided.rules if r.asks},
        )


def _as_judged(stored: RuleDef) -> JudgedAs:
    """A stored rule definition as it judged (from its history); a definition that does not
    parse says what its row does."""
    try:
        rule = stored_rule(stored)
    except ValidationError:
        return JudgedAs(
            severity=stored.severity,
            threshold=None,
            expression=expression_of(stored.rule_expression),
            asks=None,
            known=Known.HISTORY,
        )
    return JudgedAs(
        severity=str(rule.severity),
        threshold=float(rule.threshold),
        expression=canonical_expression(rule.parameters()),
        asks=rule.explain(),
        known=Known.HISTORY,
    )
