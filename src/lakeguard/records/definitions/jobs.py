"""The rows of a job: the job, its tasks and its parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable, Int32


@dataclass(frozen=True, kw_only=True)
class JobRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="jobs",
        comment="Job registry and control (seed 000 MD_JOBS + MD_JOBCONFIG).",
        keys=("tenant_id", "job_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    job_id: str
    job_name: str | None = None
    description: str | None = None
    owner: str | None = None
    schedule: Annotated[str | None, Comment("Cron expression")] = None
    trigger_sources: list[str] = field(default_factory=list)
    status_flag: Annotated[str, Comment("enabled / paused")] = "enabled"
    binding: Annotated[str | None, Comment("External orchestrator binding")] = None
    max_retries: Int32 = 0
    retry_delay_seconds: Int32 = 30
    max_concurrent_runs: Int32 = 1
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
    timezone: Annotated[str, Comment("IANA time zone the schedule is read in (default UTC)")] = (
        "UTC"
    )
    webhook_secret_ref: Annotated[
        str | None,
        Comment("Where the webhook's HMAC secret is (env var or file), never the secret"),
    ] = None

    @property
    def enabled(self) -> bool:
        """Whether it runs: only a job whose flag says so (a flag edited into any other word
        stops it, and its export says `enabled: false`)."""
        return self.status_flag == "enabled"


@dataclass(frozen=True, kw_only=True)
class JobTaskRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="job_tasks",
        comment=(
            "Tasks of a job with their order and dependencies (seed 004 etl_control; seed 003 "
            "steps)."
        ),
        keys=("tenant_id", "job_id", "task_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    job_id: str
    task_id: str
    task_type: Annotated[str, Comment("ingest (source -> bronze), promote (parent -> silver/gold)")]
    execution_order: Int32
    depends_on: list[str] = field(default_factory=list)
    dataset_id: str
    task_config: Annotated[str | None, Comment("JSON object")] = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class JobParameterRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="job_parameters",
        comment=(
            "Key/value runtime parameters per job; secrets only as references (seed 000 "
            "MD_JOBS_DET)."
        ),
        keys=("tenant_id", "job_id", "param_key"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    job_id: str
    param_key: str
    param_value: str = ""
    is_secret_ref: bool
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
