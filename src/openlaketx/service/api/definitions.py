"""The API's definitions routes, for a CI/CD pipeline or a GitOps bot: plan and apply a
document, export the definitions, what changed since, the jobs with their next tick, and the
lineage graph. Each reads or writes the caller's tenant only (its key's).

A document is YAML or JSON (by Content-Type); its errors carry path and line as
`laketx validate` gives them (422).
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

import json
from datetime import datetime
from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, JsonValue
from starlette.concurrency import run_in_threadpool

from lakeguard.actors.catalog.changes import ReportJson, parse_since
from lakeguard.records.definitions.records import JobDef
from lakeguard.rules.catalog.plan import Plan
from lakeguard.words.errors import ConfigError, NotRegisteredError, ValidationError
from lakeguard.words.schedule import next_tick
from openlaketx.service.api.context import PREFIX, Defining, JobId, Readable, State
from openlaketx.service.graph import LineageGraph, lineage_graph
from openlaketx.service.refusals import UnsupportedMediaType

SOURCE = "request body"  # how errors name the document sent
YAML_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"})
JSON_TYPE = "application/json"
DOCUMENT_BODY: dict[str, JsonValue] = {  # an OpenAPI operation's requestBody
    "requestBody": {
        "required": True,
        "description": "A metadata document (`laketx schema` gives its JSON schema)",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            JSON_TYPE: {"schema": {"type": "object"}},
        },
    }
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedChange(_Model):
    table: str
    key: list[Any]
    action: str = Field(description="create, update or deactivate")


class PlanResult(_Model):
    applied: bool
    summary: dict[str, dict[str, int]] = Field(description="Per table: rows by action")
    changes: list[PlannedChange] = Field(description="Every row that changes")
    conflicts: list[dict[str, str]]


class JobTask(_Model):
    task_id: str
    dataset_id: str
    execution_order: int
    depends_on: list[str]


class JobSummary(_Model):
    job_id: str
    enabled: bool
    schedule: str | None
    timezone: str
    triggers: list[str]
    webhook: bool = Field(description="Whether it takes signed webhooks")
    max_retries: int
    retry_delay_seconds: int
    next_tick: datetime | None = Field(description="Its schedule's next tick (UTC)")


class JobDetail(JobSummary):
    tasks: list[JobTask]
    parameters: dict[str, str]


def _job(job: JobDef, now: datetime) -> JobDetail:
    upcoming = None
    if job.schedule and job.enabled:
        try:
            upcoming = next_tick(job.schedule, job.timezone, now)
        except (ValueError, KeyError):  # a bad cron or zone: the scheduler says so too
            upcoming = None
    return JobDetail(
        job_id=job.job_id,
        enabled=job.enabled,
        schedule=job.schedule,
        timezone=job.timezone,
        triggers=list(job.triggers),
        webhook="webhook" in job.triggers and bool(job.webhook_secret_ref),
        max_retries=job.max_retries,
        retry_delay_seconds=job.retry_delay_seconds,
        next_tick=upcoming,
        tasks=[
            JobTask(
                task_id=t.task_id,
                dataset_id=t.dataset_id,
                execution_order=t.execution_order,
                depends_on=list(t.depends_on),
            )
            for t in sorted(job.tasks, key=lambda t: (t.execution_order, t.task_id))
        ],
        parameters=dict(job.parameters),
    )


def _plan_result(plan: Plan, applied: bool) -> PlanResult:
    return PlanResult(
        applied=applied,
        summary=plan.summary(),
        changes=[
            PlannedChange(table=c.table, key=list(c.key), action=c.action)
            for c in plan.changes
            if c.action != "unchanged"
        ],
        conflicts=plan.conflicts,
    )


async def _document(request: Request) -> str:
    """The document sent, as text the YAML loader reads (JSON is YAML too)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in YAML_TYPES and media != JSON_TYPE:
        raise UnsupportedMediaType(
            f"a document is YAML or JSON, not {media or 'a body without Content-Type'}",
            fix="send Content-Type: application/yaml or application/json",
        )
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(
            "the document is not UTF-8 text",
            where=SOURCE,
            errors=[{"path": SOURCE, "message": "not UTF-8"}],
            fix="send the document as UTF-8",
        ) from None
    if media == JSON_TYPE:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"{SOURCE}:{exc.lineno}:{exc.colno}"
            raise ValidationError(
                "the document is not valid JSON",
                where=where,
                errors=[{"path": where, "message": exc.msg}],
                fix="correct the JSON syntax at the position shown",
            ) from None
    return text


router = APIRouter(prefix=PREFIX)


@router.post("/definitions/plan", response_model=PlanResult, openapi_extra=DOCUMENT_BODY)
async def plan_definitions(request: Request, key: Defining, api: State) -> PlanResult:
    text = await _document(request)
    lh = api.tenants.get(key.tenant_id)
    plan = await run_in_threadpool(lh.plan_text, text, source=SOURCE)
    return _plan_result(plan, applied=False)


@router.post("/definitions/apply", response_model=PlanResult, openapi_extra=DOCUMENT_BODY)
async def apply_definitions(request: Request, key: Defining, api: State) -> PlanResult:
    text = await _document(request)
    lh = api.tenants.get(key.tenant_id)
    plan = await run_in_threadpool(lh.plan_text, text, source=SOURCE, apply=True)
    return _plan_result(plan, applied=True)


@router.get(
    "/definitions",
    responses={200: {"content": {"application/yaml": {}, JSON_TYPE: {}}}},
)
def export_definitions(
    lh: Readable,
    format: Annotated[str, Query(pattern="^(yaml|json)$")] = "yaml",
) -> Response:
    document = lh.export(relative=True)
    if format == "json":
        return Response(json.dumps(yaml.safe_load(document), default=str), media_type=JSON_TYPE)
    return Response(document, media_type="application/yaml")


# ReportJson is a typing.TypedDict, which pydantic refuses before Python 3.12: the body is
# returned as built, and documented as an object
@router.get(
    "/changes",
    response_model=None,
    responses={200: {"content": {JSON_TYPE: {"schema": {"type": "object"}}}}},
)
def changes(
    lh: Readable,
    since: Annotated[
        str | None, Query(max_length=40, description="An ISO time (UTC) or an age: 2h, 7d")
    ] = None,
    since_version: Annotated[int | None, Query(ge=0)] = None,
) -> ReportJson:
    try:
        when = None if since is None else parse_since(since, lh.store.now())
    except ConfigError as exc:
        raise ValidationError(
            exc.what, where="since", errors=[{"path": "since", "message": exc.what}]
        ) from None
    return lh.changes(since=when, since_version=since_version).as_json()


@router.get("/jobs", response_model=list[JobSummary])
def list_jobs(lh: Readable) -> list[JobSummary]:
    now = lh.store.now()
    jobs = sorted(lh.reader.definitions.registry().jobs.values(), key=lambda j: j.job_id)
    return [JobSummary(**_job(j, now).model_dump(exclude={"tasks", "parameters"})) for j in jobs]


@router.get("/jobs/{job_id}", response_model=JobDetail)
def get_job(job_id: JobId, lh: Readable) -> JobDetail:
    job = lh.reader.definitions.registry().job(job_id)
    if job is None:
        raise NotRegisteredError(f"no job {job_id}", where="jobs")
    return _job(job, lh.store.now())


@router.get("/lineage", response_model=LineageGraph)
def lineage(lh: Readable) -> LineageGraph:
    return lineage_graph(lh.reader.definitions.registry())
