"""The API's webhook route: a signed delivery triggers its job (docs/service.md)."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

import logging
from typing import Annotated

from fastapi import APIRouter, Request, Response, Security
from fastapi.security import APIKeyHeader
from starlette.concurrency import run_in_threadpool

from lakeguard.words.errors import AuthError
from lakeguard.words.vocabulary import TriggerType
from openlaketx.service.api.context import PREFIX, JobId, State
from openlaketx.service.api.runs import RunAccepted
from openlaketx.service.auth import client_address
from openlaketx.service.hooks import Refused

_log = logging.getLogger(__name__)
# Declares the webhook's scheme in the OpenAPI document; the route checks the signature itself.
SIGNED = APIKeyHeader(
    name="X-LakeTx-Signature",
    auto_error=False,
    scheme_name="webhookSignature",
    description="sha256=<HMAC-SHA256 of `<timestamp>.<delivery id>.<body>`> with "
    "X-LakeTx-Timestamp and X-LakeTx-Delivery (docs/service.md)",
)

router = APIRouter(prefix=PREFIX)


@router.post("/hooks/{job_id}", status_code=202, response_model=RunAccepted)
async def webhook(
    request: Request,
    response: Response,
    job_id: JobId,
    api: State,
    _declared: Annotated[str | None, Security(SIGNED)] = None,
) -> RunAccepted:
    body = await request.body()
    address, target = client_address(request), api.hooks.target(request.headers, job_id)
    api.brake.check(address, target)
    try:
        delivery = await run_in_threadpool(api.hooks.verify, request.headers, job_id, body)
    except Refused as refused:
        # one answer for every refusal: the caller learns nothing of tenants, jobs or secrets;
        # the operator reads why here
        _log.warning("webhook for %s from %s refused: %s", target, address, refused.detail)
        api.brake.failed(address, target)
        raise AuthError(
            "the webhook delivery is not authenticated",
            fix="sign `<timestamp>.<delivery id>.<body>` with HMAC-SHA256 and the job's "
            "secret; send X-LakeTx-Timestamp, X-LakeTx-Delivery (letters, digits, `_:-`, "
            "no `.`) and X-LakeTx-Signature: sha256=<hex> (docs/service.md)",
        ) from None
    accepted = await run_in_threadpool(
        api.runs.submit,
        delivery.tenant,
        delivery.job_id,
        trigger_type=TriggerType.WEBHOOK,
        triggered_by=f"webhook {delivery.delivery_id}",
        request_key=f"hook:{delivery.job_id}:{delivery.delivery_id}",
    )
    response.headers["Location"] = f"{PREFIX}/runs/{accepted.run_id}"
    return RunAccepted(run_id=accepted.run_id, job_id=accepted.job_id, new=accepted.new)
