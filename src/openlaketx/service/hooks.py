"""Signed webhook deliveries: how they are signed and how one is checked.

A delivery is signed like Stripe's and GitHub's: HMAC-SHA256, keyed by the job's secret, over
`<timestamp>.<delivery id>.<raw body>`, sent as `X-LakeTx-Signature: sha256=<hex>` with
`X-LakeTx-Timestamp` (Unix seconds) and `X-LakeTx-Delivery`. The timestamp must be within the
tolerance of now, so a captured delivery cannot be sent later; within that window the delivery
id names one run (the run requests remember it), so a replay answers with its first run. The
timestamp is digits and the id has no `.`, so the signed text splits one way only: with a dot
allowed, `2026.12` and body `01.<body>` signed the same text as `2026.12.01` and `<body>`, and
one captured delivery ran again under each prefix of its id.

Every way a delivery can fail — an unknown tenant or job, a job without the webhook trigger, a
secret that cannot be read, a missing header, a stale timestamp, a wrong signature — is the
same `Refused` to the caller; only its detail, for the log, tells them apart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lakeguard.words.errors import LakeTxError
from openlaketx.config import DEFAULT_TENANT
from openlaketx.service.tenants import Tenants
from openlaketx.sources.credentials import resolve

PREFIX = "sha256="
TENANT_HEADER = "x-laketx-tenant"
TIMESTAMP_HEADER = "x-laketx-timestamp"
DELIVERY_HEADER = "x-laketx-delivery"
SIGNATURE_HEADER = "x-laketx-signature"
_TENANT = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_DELIVERY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_:-]{0,199}$")  # no `.`: see above
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_SIGNATURE = re.compile(r"^sha256=[0-9a-f]{64}$")


def signed_content(timestamp: str, delivery: str, body: bytes) -> bytes:
    """What a delivery's signature covers."""
    return f"{timestamp}.{delivery}.".encode() + body


def sign(secret: str, timestamp: str, delivery: str, body: bytes) -> str:
    """The `X-LakeTx-Signature` value of a delivery."""
    content = signed_content(timestamp, delivery, body)
    return PREFIX + hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


class Refused(Exception):
    """A delivery that is not authenticated; `detail` is for the log only."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class Delivery:
    """An authenticated delivery."""

    tenant: str
    job_id: str
    delivery_id: str


class HookVerifier:
    """Checks deliveries against each tenant's jobs and their secrets."""

    def __init__(
        self,
        tenants: Tenants,
        tolerance_seconds: int = 300,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tenants = tenants
        self.tolerance = tolerance_seconds
        self.clock = clock

    def target(self, headers: Mapping[str, str], job_id: str) -> str:
        """What the delivery asks for, as the brake counts it (whether it exists or not)."""
        return f"hook:{headers.get(TENANT_HEADER, DEFAULT_TENANT)[:63]}/{job_id}"

    def verify(self, headers: Mapping[str, str], job_id: str, body: bytes) -> Delivery:
        tenant = headers.get(TENANT_HEADER, DEFAULT_TENANT)
        timestamp = headers.get(TIMESTAMP_HEADER, "")
        delivery = headers.get(DELIVERY_HEADER, "")
        given = [s for s in re.split(r"[\s,]+", headers.get(SIGNATURE_HEADER, "")) if s]
        secret, missing = self._secret(tenant, job_id)
        # the signature is computed whether or not the job exists: the answer takes as long
        expected = sign(secret, timestamp, delivery, body)
        matched = any(hmac.compare_digest(expected, s) for s in given)
        if missing is not None:
            raise Refused(missing)
        if not _TIMESTAMP.match(timestamp):
            raise Refused(f"{TIMESTAMP_HEADER} is missing or not Unix seconds")
        if "." in delivery:
            raise Refused(f"{DELIVERY_HEADER} has a '.': the signed text would be ambiguous")
        if not _DELIVERY.match(delivery):
            raise Refused(f"{DELIVERY_HEADER} is missing or not a delivery id")
        if not given or not all(_SIGNATURE.match(s) for s in given):
            raise Refused(f"{SIGNATURE_HEADER} is missing or not sha256=<64 hex digits>")
        skew = abs(self.clock() - int(timestamp))
        if skew > self.tolerance:
            raise Refused(f"the timestamp is {skew:.0f} s from now (tolerance {self.tolerance} s)")
        if not matched:
            raise Refused("the signature does not match the timestamp, delivery id and body")
        return Delivery(tenant, job_id, delivery)

    def _secret(self, tenant: str, job_id: str) -> tuple[str, str | None]:
        """(the job's secret, None), or (a random stand-in, why there is none)."""
        stand_in = secrets.token_hex(32)
        if not _TENANT.match(tenant) or tenant not in self.tenants.known():  # never creates one
            return stand_in, f"no tenant {tenant!r}"
        try:
            lakehouse = self.tenants.get(tenant)
            job = lakehouse.reader.definitions.registry().job(job_id)
        except LakeTxError as exc:
            return stand_in, f"tenant {tenant}: its definitions cannot be read: {exc.what}"
        if job is None:
            return stand_in, f"tenant {tenant} has no job {job_id}"
        if "webhook" not in job.triggers or not job.webhook_secret_ref:
            return stand_in, f"job {job_id} of tenant {tenant} takes no webhook"
        try:
            secret = resolve(
                job.webhook_secret_ref,
                where=f"jobs[{job_id}].webhook_secret_ref",
                reach=lakehouse.store.tenant_reach(),
            )
        except LakeTxError as exc:
            return stand_in, f"job {job_id} of tenant {tenant}: {exc.what}"
        if not secret:
            return stand_in, f"job {job_id} of tenant {tenant}: its webhook secret is empty"
        return secret, None
