"""The API's run routes: health, trigger a job, list runs and read one (a long poll may wait
for it to end)."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

import hashlib
import json
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response
from pydantic import BaseModel, Field, JsonValue

from lakeguard.records.runs.records import JobRunRecord
from lakeguard.records.runs.rows import RunHistoryRow, StepLogRow
from lakeguard.words.errors import NotRegisteredError
from lakeguard.words.vocabulary import IN_FLIGHT, TriggerType
from openlaketx.outcomes import word_of
from openlaketx.service import run_views
from openlaketx.service.api.context import (
    PREFIX,
    JobId,
    Model,
    Readable,
    RunId,
    State,
    Triggering,
    plain,
)
from openlaketx.service.warmup import SparkState

MAX_RUNS = 100
MAX_WAIT_SECONDS = 60  # a long poll holds one of the server's worker threads

router = APIRouter(prefix=PREFIX)


class RunRequest(Model):
    wait: float = Field(
        default=0.0,
        ge=0.0,
        le=3600.0,
        description="Seconds the run may wait for another run holding one of its datasets "
        "(0: answer 409 at once)",
    )


class RunAccepted(Model):
    run_id: str
    job_id: str
    new: bool = Field(description="False: the Idempotency-Key named an earlier request")


class RunSummary(Model):
    run_id: str
    job_id: str
    status: str = Field(description="As stored: PENDING, RUNNING, COMPLETED, BLOCKED or FAILED")
    outcome: str | None = Field(
        description="As the pages and the CLI say it (openlaketx/outcomes.py): PROMOTED, HELD, "
        "FAILED, RUNNING or PENDING"
    )
    trigger_type: str
    triggered_by: str | None
    start_time: datetime
    end_time: datetime | None
    duration_ms: int | None
    error: str | None
    current_step: str | None = Field(description="A run in flight: the dataset it is on")
    retry_of: str | None = Field(description="A retry: the run it retries")
    scheduled_for: datetime | None = Field(description="A schedule's run: its tick (UTC)")


class RunPage(Model):
    runs: list[RunSummary]
    limit: int
    offset: int
    next_offset: int | None = Field(description="Paged by offset: the next page's offset")
    next_after: str | None = Field(
        default=None,
        description="Filtered or paged by `after`: the next page's cursor (None: the last page)",
    )


class RunDetail(RunSummary):
    tasks: list[run_views.TaskRow] = Field(
        description="Each task of the job with its outcome in this run, the ones never "
        "attempted too (SKIPPED, or FAILED when the run failed before any began)"
    )
    attempts: list[RunHistoryRow] = Field(description="Its dataset attempts (run_history)")
    steps: list[StepLogRow] = Field(description="Their logged phases (step_logs)")
    # `explain --json`'s shape, which lakeguard's DecisionRecord.to_json owns
    decisions: list[dict[str, JsonValue]]


def summary(record: JobRunRecord) -> RunSummary:
    """A job run as the API shows it: `status` as stored, `outcome` as shown."""
    return RunSummary(
        run_id=record.pipeline_logging_id,
        job_id=record.pipeline_id,
        status=str(record.status),
        outcome=word_of(record.status),
        trigger_type=str(record.trigger_type),
        triggered_by=record.triggered_by,
        start_time=record.start_time,
        end_time=record.end_time,
        duration_ms=record.duration_ms,
        error=record.error_message,
        current_step=record.current_step,
        retry_of=record.retry_of,
        scheduled_for=record.scheduled_for,
    )


def _ended(record: JobRunRecord | None) -> bool:
    return record is None or record.status not in IN_FLIGHT


def fingerprint(method: str, path: str, body: BaseModel | None) -> str:
    """What an Idempotency-Key is bound to: the method, the path and the body (as JSON with
    sorted keys, the fields sent)."""
    sent = body.model_dump(mode="json", exclude_unset=True) if body is not None else {}
    text = f"{method}\n{path}\n{json.dumps(sent, sort_keys=True, separators=(',', ':'))}"
    return hashlib.sha256(text.encode()).hexdigest()


class Health(Model):
    status: str = Field(description="ok while the service answers")
    accepting: bool = Field(description="False while it drains: new runs are refused")
    spark: SparkState = Field(description="Where the process's Spark session stands")


@router.get("/health")
def health(api: State) -> Health:
    # No key is needed here, so nothing that counts any tenant's work (runs in flight would
    # tell one tenant about another's): liveness, readiness while draining, and whether a run
    # would still pay for starting Spark.
    return Health(status="ok", accepting=api.runs.accepting, spark=api.warmup.state)


@router.post("/jobs/{job_id}/runs", status_code=202, response_model=RunAccepted)
def trigger(
    request: Request,
    response: Response,
    job_id: JobId,
    key: Triggering,
    api: State,
    body: RunRequest | None = None,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", max_length=200, pattern=r"^[\x21-\x7e]+$")
    ] = None,
) -> RunAccepted:
    accepted = api.runs.submit(
        key.tenant_id,
        job_id,
        trigger_type=TriggerType.API,
        triggered_by=f"api key {key.api_key_id}",
        request_key=f"idem:{idempotency_key}" if idempotency_key else None,
        fingerprint=fingerprint(request.method, request.url.path, body),
        wait=body.wait if body else 0.0,
    )
    response.headers["Location"] = f"{PREFIX}/runs/{accepted.run_id}"
    return RunAccepted(run_id=accepted.run_id, job_id=accepted.job_id, new=accepted.new)


@router.get("/runs", response_model=RunPage)
def list_runs(
    lh: Readable,
    limit: Annotated[int, Query(ge=1, le=MAX_RUNS)] = 20,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    job: Annotated[str | None, Query(max_length=63)] = None,
    outcome: Annotated[str | None, Query(max_length=20, description="PROMOTED, HELD, ...")] = None,
    trigger: Annotated[str | None, Query(max_length=40)] = None,
    since: Annotated[str | None, Query(max_length=40, description="ISO date or time")] = None,
    until: Annotated[str | None, Query(max_length=40, description="ISO date or time")] = None,
    after: Annotated[str | None, Query(max_length=120, description="a page's next_after")] = None,
) -> RunPage:
    if any((job, outcome, trigger, since, until, after)):  # a stable keyset page
        where = run_views.RunFilter.parse(job, outcome, trigger, since, until)
        page = run_views.runs_page(lh, where, run_views.Cursor.parse(after), limit)
        return RunPage(
            runs=[summary(r) for r in page.runs],
            limit=limit,
            offset=0,
            next_offset=None,
            next_after=None if page.after is None else page.after.text(),
        )
    found = lh.reader.runs.job_runs(limit + 1, offset)
    return RunPage(
        runs=[summary(r) for r in found[:limit]],
        limit=limit,
        offset=offset,
        next_offset=offset + limit if len(found) > limit else None,
    )


@router.get("/runs/{run_id}", response_model=RunDetail)
def get_run(
    run_id: RunId,
    lh: Readable,
    api: State,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_SECONDS,
            description="Seconds to hold the answer until the run ends (a long poll)",
        ),
    ] = 0.0,
) -> RunDetail:
    record = lh.reader.runs.job_run(run_id)
    if record is None:
        raise NotRegisteredError(f"no run {run_id}", where="pipeline_runs")
    if wait > 0 and record.status in IN_FLIGHT:
        api.runs.wait_for(run_id, wait, ended=lambda: _ended(lh.reader.runs.job_run(run_id)))
        record = lh.reader.runs.job_run(run_id) or record
    attempts = lh.reader.runs.attempts(run_id)
    decisions = lh.reader.decisions.decisions(run_ids=[a.run_id for a in attempts])
    return RunDetail(
        **summary(record).model_dump(),
        tasks=run_views.task_rows(run_views.run_tasks(lh, record, attempts)),
        attempts=attempts,
        steps=lh.reader.runs.steps(run_id),
        decisions=[plain(d.to_json()) for d in decisions],
    )
