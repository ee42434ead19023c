"""OpenLineage events for every dataset step, when the client is configured (off otherwise).

Configured by the `openlineage-python` client's own conventions (e.g.
`OPENLINEAGE__TRANSPORT__TYPE=file`, `OPENLINEAGE_URL`, `OPENLINEAGE_CONFIG`). Each dataset
step emits START, then COMPLETE (promoted or nothing new), FAIL (failed, or blocked by the
gate: a blocked step is never a COMPLETE that looks fine) or ABORT (blocked under
`fail_behavior: abort`). Events carry the step's inputs (parent datasets with the versions read,
or source objects) and its output table, the rule outcomes as `dataQualityAssertions`, the
batch's row count and null counts as `dataQualityMetrics`, and a `laketx_decision` run facet
(allowed, reason, version made, trust).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import attr

from lakeguard.records.definitions.records import DatasetDef
from lakeguard.words.vocabulary import AttemptStatus, Outcome
from openlaketx.runner.context import StepObserver, StepResult

if TYPE_CHECKING:
    from openlineage.client.facet_v2 import DatasetFacet, InputDatasetFacet, RunFacet

PRODUCER = "https://github.com/openlaketx/openlaketx"
_log = logging.getLogger(__name__)


def configured() -> bool:
    """Whether the OpenLineage client has a transport configured in the environment."""
    if os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return False
    return any(
        k.startswith("OPENLINEAGE__TRANSPORT") or k in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG")
        for k in os.environ
    )


def lineage_observer(tenant: str) -> StepObserver | None:
    """The lineage emitter for a tenant's runs (None when lineage is not configured)."""
    return LineageObserver(tenant) if configured() else None


def _uuid(run_id: str) -> str:
    """An engine id (32 hex digits) as the UUID an OpenLineage run id must be."""
    try:
        return str(uuid.UUID(hex=run_id))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, run_id))


def _now() -> str:
    return datetime.now(UTC).isoformat()


class LineageObserver:
    """Emits a START and an end event per dataset step through the OpenLineage client."""

    def __init__(self, tenant: str, client: Any = None) -> None:
        # start-up time: openlineage loads only when lineage is configured
        from openlineage.client import OpenLineageClient

        self.namespace = f"laketx://{tenant}"
        self.client = client or OpenLineageClient()

    def _emit(self, event: Any) -> None:
        try:
            self.client.emit(event)
        except Exception as exc:  # lineage is a report: it never fails a run
            _log.warning("OpenLineage event not emitted: %s", exc)

    def _declared_inputs(self, dataset: DatasetDef) -> list[Any]:
        # start-up time: openlineage loads only when lineage is configured
        from openlineage.client.event_v2 import InputDataset

        return [InputDataset(namespace=self.namespace, name=p) for p in dataset.parents]

    def started(self, dataset: DatasetDef, attempt_id: str, job_run_id: str) -> None:
        # start-up time: openlineage loads only when lineage is configured
        from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState

        self._emit(
            RunEvent(
                eventType=RunState.START,
                eventTime=_now(),
                producer=PRODUCER,
                run=Run(runId=_uuid(attempt_id), facets=self._parent(job_run_id, dataset)),
                job=Job(namespace=self.namespace, name=dataset.dataset_id),
                inputs=self._declared_inputs(dataset),
                outputs=[OutputDataset(namespace=self.namespace, name=dataset.table_name)],
            )
        )

    def _parent(self, job_run_id: str, dataset: DatasetDef) -> dict[str, RunFacet]:
        # start-up time: openlineage loads only when lineage is configured
        from openlineage.client.facet_v2 import parent_run

        return {
            "parent": parent_run.ParentRunFacet(
                run=parent_run.Run(runId=_uuid(job_run_id)),
                job=parent_run.Job(namespace=self.namespace, name=f"job:{dataset.dataset_id}"),
            )
        }

    def ended(self, dataset: DatasetDef, result: StepResult, job_run_id: str) -> None:
        # start-up time: openlineage loads only when lineage is configured
        from openlineage.client.event_v2 import (
            InputDataset,
            Job,
            OutputDataset,
            Run,
            RunEvent,
            RunState,
        )
        from openlineage.client.facet_v2 import (
            data_quality_assertions_dataset as assertions,
        )
        from openlineage.client.facet_v2 import data_quality_metrics_dataset as metrics
        from openlineage.client.facet_v2 import error_message_run

        if result.status == AttemptStatus.SUCCESS:
            state = RunState.COMPLETE
        elif result.aborts_job:
            state = RunState.ABORT
        else:
            state = RunState.FAIL
        run_facets: dict[str, RunFacet] = {
            **self._parent(job_run_id, dataset),
            "laketx_decision": _decision_facet_class()(
                status=str(result.status),
                allowed=result.status == AttemptStatus.SUCCESS,
                reason=result.reason or "",
                version=result.data_version,
                trust=result.trust,
                producer=PRODUCER,
            ),
        }
        if result.status != AttemptStatus.SUCCESS:
            why = "blocked by the gate" if result.status == AttemptStatus.BLOCKED else "failed"
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=f"{why}: {result.reason or ''}",
                programmingLanguage="python",
                producer=PRODUCER,
            )
        nulls = {m.column: m.value for m in result.profile if m.metric == "null_count"}
        # dataQualityAssertions is an input dataset facet in the client's model, sent here on
        # the output (where the quality was judged)
        output_facets: dict[str, DatasetFacet | InputDatasetFacet] = {
            "dataQualityAssertions": assertions.DataQualityAssertionsDatasetFacet(
                assertions=[
                    assertions.Assertion(
                        assertion=o.rule_id,
                        success=o.outcome != Outcome.FAIL,
                        severity=o.severity,
                        column=o.columns[0] if len(o.columns) == 1 else None,
                        actual=str(o.failed_rows),
                        expected=f"at most {o.threshold:.2%} failing",
                    )
                    for o in result.outcomes
                ],
                producer=PRODUCER,
            ),
            "dataQualityMetrics": metrics.DataQualityMetricsDatasetFacet(
                rowCount=result.rows_read,
                columnMetrics={
                    c: metrics.ColumnMetrics(nullCount=int(v))
                    for c, v in nulls.items()
                    if v is not None
                },
                producer=PRODUCER,
            ),
        }
        self._emit(
            RunEvent(
                eventType=state,
                eventTime=_now(),
                producer=PRODUCER,
                run=Run(runId=_uuid(result.run_id), facets=run_facets),
                job=Job(namespace=self.namespace, name=dataset.dataset_id),
                inputs=[
                    InputDataset(
                        namespace=self.namespace,
                        name=name if version is None else f"{name}@v{version}",
                    )
                    for name, version in sorted(result.inputs.items())
                ]
                or self._declared_inputs(dataset),
                outputs=[
                    OutputDataset(
                        namespace=self.namespace,
                        name=dataset.table_name,
                        # the client declares DatasetFacet values only: an event serializes any
                        facets=output_facets,  # type: ignore[arg-type]
                    )
                ],
            )
        )


def _decision_facet_class() -> Callable[..., RunFacet]:
    """The `laketx_decision` run facet class (built on first use: the client is optional)."""
    # start-up time: openlineage loads only when lineage is configured
    from openlineage.client.facet_v2 import RunFacet

    @attr.define
    class DecisionRunFacet(RunFacet):
        """LakeGuard's decision on the step: allowed or not, why, the version made, trust."""

        status: str
        allowed: bool
        reason: str
        version: int | None = attr.field(default=None)
        trust: int | None = attr.field(default=None)

        @staticmethod
        def _get_schema() -> str:
            return "https://openlaketx.dev/spec/facets/1-0-0/LaketxDecisionRunFacet.json"

    return DecisionRunFacet
