"""What the parts of a governed step share: the run's context, the dataset being written, and
the result of an attempt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from lakeguard.actors.gate import Gate
from lakeguard.reads.registry import Registry
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.quality.outcome import ProfileMetric, RuleOutcome
from lakeguard.records.reach import Reach
from lakeguard.store import RunWriter
from lakeguard.words.errors import LakeTxError
from lakeguard.words.vocabulary import AttemptStatus, LoadType
from openlaketx import storage
from openlaketx.loads.merge_plan import MergePlan
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.batch_rows import merge_plan
from openlaketx.runner.deadline import RunDeadline
from openlaketx.runner.lease import LeaseHold
from openlaketx.runner.lifecycle import JobRun
from openlaketx.sources.layouts import CORRUPT_COLUMN
from openlaketx.tables import dataset_location, quarantine_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Staged with the rows, never part of the table (besides `vocabulary.is_staged_only`): the
# unparseable text of a row.
NOT_PUBLISHED = frozenset({CORRUPT_COLUMN})


@dataclass(kw_only=True)
class StepResult:
    dataset_id: str
    run_id: str
    status: AttemptStatus
    rows_read: int | None = None
    rows_written: int | None = None
    data_version: int | None = None
    reason: str | None = None
    error: LakeTxError | None = None
    outcomes: list[RuleOutcome] = field(default_factory=list)
    quarantined: int = 0
    aborts_job: bool = False  # blocked under fail_behavior: abort; the job stops here
    # what the batch read: each parent's version, or each source object (None)
    inputs: dict[str, int | None] = field(default_factory=dict)
    profile: list[ProfileMetric] = field(default_factory=list)  # the batch's footer profile
    trust: int | None = None  # the dataset's trust score after the attempt


class StepObserver(Protocol):
    """Told when each dataset attempt of a run starts and ends (lineage events, the API's
    view of a run in flight)."""

    def started(self, dataset: DatasetDef, attempt_id: str, job_run_id: str) -> None: ...

    def ended(self, dataset: DatasetDef, result: StepResult, job_run_id: str) -> None: ...


class NoObserver:
    def started(self, dataset: DatasetDef, attempt_id: str, job_run_id: str) -> None:
        return None

    def ended(self, dataset: DatasetDef, result: StepResult, job_run_id: str) -> None:
        return None


@dataclass(frozen=True, kw_only=True)
class RunContext:
    spark: SparkSession
    gate: Gate
    writer: RunWriter
    registry: Registry
    warehouse: str
    job: JobRun
    progress: Callable[[str], None]
    hold: LeaseHold  # the job run's leases: every dataset it writes, taken up front
    reach: Reach  # what the tenant's sources may open, list, move and connect to
    observer: StepObserver = field(default_factory=NoObserver)
    deadline: RunDeadline = field(default_factory=RunDeadline)  # its time limit (or none)


@dataclass(frozen=True)
class Target:
    """The dataset an attempt writes: its definition, its table and its quarantine."""

    dataset: DatasetDef
    path: str
    quarantine_path: str

    @classmethod
    def of(cls, warehouse: str, dataset: DatasetDef) -> Target:
        return cls(
            dataset,
            dataset_location(warehouse, dataset.table_name),
            dataset_location(warehouse, quarantine_name(dataset.dataset_id)),
        )

    @property
    def dataset_id(self) -> str:
        return self.dataset.dataset_id

    @property
    def load_type(self) -> LoadType:
        return LoadType(self.dataset.load_type)

    @property
    def merges(self) -> bool:
        return self.load_type in (LoadType.MERGE, LoadType.SCD2)

    def exists(self) -> bool:
        return bool(storage.is_delta_table(self.path))

    def merging(self, batch: InputBatch) -> bool:
        """Whether the batch is published by a MERGE: a merge or scd2 batch into an existing
        table, or a catch-up of several parent versions (applied in order, even the first)."""
        return self.merges and (self.exists() or bool(batch.parent_versions))

    def plan(self, batch: InputBatch) -> MergePlan:
        return merge_plan(self.dataset, batch.parent_versions)

    def result(self, run_id: str, status: AttemptStatus, **fields: Any) -> StepResult:
        return StepResult(dataset_id=self.dataset_id, run_id=run_id, status=status, **fields)


def batch_inputs(batch: InputBatch) -> dict[str, int | None]:
    """What a batch read: each parent at its version, each source object."""
    found: dict[str, int | None] = {s.source_object_id: None for s in batch.sources}
    found.update(batch.upstream_refs)
    return found
