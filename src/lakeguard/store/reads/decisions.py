"""Reads of the gate's decisions with their rule outcomes, schema changes, trust and advice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lakeguard.errors import ValidationError
from lakeguard.explain import advise
from lakeguard.quality.kinds import stored_rule
from lakeguard.store.definition_rows import QualityRuleRow
from lakeguard.store.reads.status import StatusReads
from lakeguard.store.reads.versions import VersionReads
from lakeguard.store.records import DecisionRecord, RuleDef, RuleResult, SchemaChange
from lakeguard.store.runtime_rows import DecisionRow, RuleResultRow, SchemaChangeRow
from lakeguard.stuck import Blocked, stuck


class DecisionReads(VersionReads, StatusReads):
    """Gate decisions and the rule results they were made on."""

    def rule_results(self, run_ids: Sequence[str]) -> dict[str, tuple[RuleResult, ...]]:
        """Rule outcomes of the given dataset attempts, by run id, in rule order."""
        if not run_ids:
            return {}
        rows = self._store.read(RuleResultRow, filters=[("run_id", "in", list(run_ids))])
        found: dict[str, list[RuleResult]] = {}
        for row in sorted(rows, key=lambda r: (r.executed_at, r.rule_id)):
            found.setdefault(row.run_id, []).append(RuleResult.from_row(row))
        return {k: tuple(v) for k, v in found.items()}

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
        version = next((v.version for v in self.versions(dataset_id) if v.run_id == attempt), None)
        record = DecisionRecord.from_row(latest, results.get(attempt, ()))
        decided = replace(
            record,
            schema_changes=tuple(SchemaChange.from_row(c) for c in changes),
            version=version,
        )
        score = self.trust([dataset_id])[dataset_id]
        blocked = stuck(sorted((Blocked.from_row(r) for r in rows), key=lambda b: b.evaluated_at))
        advice = advise(decided)
        if blocked is not None and not decided.allowed:
            advice.insert(0, blocked.fix())
        return replace(
            decided,
            advice=tuple(advice),
            trust=score,
            stuck=blocked.summary() if blocked else None,
            asks=self._rule_texts(dataset_id),
        )

    def _rule_texts(self, dataset_id: str) -> dict[str, str]:
        """What each of the dataset's rules asks, in words (rules that no longer parse say
        nothing: their definition is reported where it is compiled)."""
        rows = self._store.definitions(QualityRuleRow, [("dataset_id", "=", dataset_id)])
        texts = {}
        for row in rows:
            try:
                texts[row.rule_id] = stored_rule(RuleDef.from_row(row)).explain()
            except ValidationError:
                continue
        return texts
