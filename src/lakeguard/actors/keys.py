"""API keys: tenant-scoped, scoped by action, hashed at rest, expiring (seed 003).

A token reads `ltx_<key id>_<secret>_<checksum>`: a fixed prefix and a checksum so secret
scanners can recognise one (and a typo is refused without a lookup), a public key id to find
its row, and 192 random bits. Only the SHA-256 of the whole token is stored (`api_key_hash`),
and a presented token is compared with it in constant time. No function here returns or logs
a stored hash or a token, except `create` and `rotate`, which hand the new token out once.

Keys of every tenant live in the home's control store (the default tenant's namespace), each
row under its own tenant.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from lakeguard.records.definitions.keys import ApiKeyRow
from lakeguard.words.errors import AuthError, LakeTxError, NotRegisteredError
from lakeguard.words.hashing import fingerprint

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

_log = logging.getLogger(__name__)

PREFIX = "ltx"
TABLE = ApiKeyRow.TABLE.name
# `last_used_at` is written at most this often per key: each write is a commit.
TOUCH_EVERY = timedelta(minutes=5)
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TOKEN = re.compile(rf"^{PREFIX}_([0-9a-f]{{12}})_([0-9A-Za-z]{{33}})_([0-9A-Za-z]{{6}})$")


class Scope(StrEnum):
    RUNS_TRIGGER = "runs:trigger"  # start runs of the tenant's jobs
    RUNS_READ = "runs:read"  # read runs, datasets, decisions and approved rows
    KEYS_ADMIN = "keys:admin"  # list and revoke the tenant's keys, verify its store
    DEFINITIONS_WRITE = "definitions:write"  # plan and apply metadata documents


@dataclass(frozen=True, kw_only=True)
class ApiKey:
    """A key as listed: never its token nor its hash."""

    api_key_id: str
    tenant_id: str
    scopes: tuple[Scope, ...]
    created_at: datetime
    created_by: str | None
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    description: str | None
    is_active: bool

    def usable(self, now: datetime) -> bool:
        return (
            self.is_active
            and self.revoked_at is None
            and (self.expires_at is None or self.expires_at > now)
        )


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        digits.append(_ALPHABET[rest])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), 6)


def new_token() -> tuple[str, str]:
    """(key id, token): a fresh token with 192 random bits."""
    key_id = secrets.token_hex(6)
    secret = _base62(int.from_bytes(secrets.token_bytes(24), "big"), 33)
    body = f"{PREFIX}_{key_id}_{secret}"
    return key_id, f"{body}_{_checksum(body)}"


def key_id_of(token: str) -> str | None:
    """The key id of a well-formed token whose checksum holds (None otherwise)."""
    match = _TOKEN.match(token or "")
    if match is None:
        return None
    body = token.rsplit("_", 1)[0]
    return match.group(1) if hmac.compare_digest(_checksum(body), match.group(3)) else None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _record(row: ApiKeyRow) -> ApiKey:
    assert row.tenant_id is not None and row.created_at is not None  # a stored key has both
    return ApiKey(
        api_key_id=row.api_key_id,
        tenant_id=row.tenant_id,
        scopes=tuple(Scope(s) for s in (row.scopes or ()) if s in set(Scope)),
        created_at=row.created_at,
        created_by=row.created_by,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        last_used_at=row.last_used_at,
        description=row.description,
        is_active=row.is_active,
    )


class KeyStore:
    """The API keys of a home (its control store), for every tenant."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store  # the control store; rows are written under each key's tenant
        self._touched: dict[str, datetime] = {}
        self._lock = threading.Lock()

    def _rows(self, **where: str) -> list[ApiKeyRow]:
        filters = [(k, "=", v) for k, v in where.items()]
        rows = self._store.rows(TABLE, filters=filters, all_tenants=True)
        return [ApiKeyRow.from_row(r) for r in rows]

    def _write(self, row: ApiKeyRow) -> None:
        assert row.tenant_id is not None  # every key is some tenant's
        content = {k: v for k, v in row.said().items() if k != "last_used_at"}
        stored = row.replaced(definition_hash=fingerprint(content), updated_at=None)
        self._store.as_tenant(row.tenant_id).upsert(TABLE, [stored])

    def create(
        self,
        tenant: str,
        scopes: tuple[Scope, ...],
        *,
        expires_in: timedelta | None = None,
        description: str | None = None,
        created_by: str | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key of `tenant`: (its record, its token, shown this once)."""
        now = self._store.now()
        key_id, token = new_token()
        row = ApiKeyRow(
            tenant_id=tenant,
            api_key_id=key_id,
            api_key_hash=token_hash(token),
            scopes=sorted(str(s) for s in scopes),
            created_by=created_by,
            created_at=now,
            expires_at=now + expires_in if expires_in else None,
            is_active=True,
            description=description,
        )
        self._write(row)
        return _record(row), token

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        rows = self._rows(tenant_id=tenant) if tenant else self._rows()
        return sorted((_record(r) for r in rows), key=lambda k: k.created_at)

    def _row(self, key_id: str, tenant: str | None = None) -> ApiKeyRow:
        rows = self._rows(api_key_id=key_id)
        rows = [r for r in rows if tenant is None or r.tenant_id == tenant]
        if not rows:
            raise NotRegisteredError(
                f"no API key {key_id}" + (f" for tenant {tenant}" if tenant else ""),
                where=TABLE,
                fix="list the keys with `laketx keys list`",
            )
        return rows[0]

    def revoke(self, key_id: str, tenant: str | None = None) -> ApiKey:
        """Stop a key at once (it is kept, revoked, for the record)."""
        row = self._row(key_id, tenant).replaced(revoked_at=self._store.now(), is_active=False)
        self._write(row)
        return _record(row)

    def rotate(
        self, key_id: str, overlap: timedelta, tenant: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key with the same tenant, scopes and description; the old one keeps working
        for `overlap`, then expires."""
        old = self._row(key_id, tenant)
        now = self._store.now()
        ends = now + overlap
        if old.expires_at is None or old.expires_at > ends:
            self._write(old.replaced(expires_at=ends))
        before = _record(old)
        remaining = before.expires_at - now if before.expires_at else None
        return self.create(
            before.tenant_id,
            before.scopes,
            expires_in=remaining if remaining and remaining > overlap else None,
            description=before.description,
            created_by=f"rotation of {key_id}",
        )

    def exists(self, key_id: str) -> bool:
        """Whether a key with this id was ever created (whatever its state)."""
        return bool(self._rows(api_key_id=key_id))

    def authenticate(self, token: str) -> ApiKey:
        """The usable key behind a presented token; AuthError (never naming the token) when
        it is malformed, unknown, wrong, expired, revoked or inactive."""
        key_id = key_id_of(token)
        refused = AuthError(
            "the API key is not valid",
            fix="send a valid, unexpired key as `Authorization: Bearer <key>`",
        )
        if key_id is None:
            raise refused
        rows = self._rows(api_key_id=key_id)
        presented = token_hash(token)
        row = next((r for r in rows if hmac.compare_digest(r.api_key_hash, presented)), None)
        now = self._store.now()
        if row is None or not _record(row).usable(now):
            raise refused
        if self._due(key_id, row.last_used_at, now):
            self._touch(row, now)
            row = row.replaced(last_used_at=now)
        return _record(row)

    def _due(self, key_id: str, last: datetime | None, now: datetime) -> bool:
        """Whether this request records the key's use: at most once per TOUCH_EVERY, and
        by one of the requests arriving together."""
        with self._lock:
            mine = self._touched.get(key_id)
            newest = max((t for t in (last, mine) if t is not None), default=None)
            if newest is not None and now - newest < TOUCH_EVERY:
                return False
            self._touched[key_id] = now
            return True

    def _touch(self, row: ApiKeyRow, now: datetime) -> None:
        """Record a use: only `last_used_at` is written, so a revocation committed since
        this request read the key is never written back; failing to record never fails
        the request."""
        try:
            self._store.as_tenant(str(row.tenant_id)).set_columns(
                TABLE, [{"api_key_id": row.api_key_id, "last_used_at": now}], ["last_used_at"]
            )
        except LakeTxError as exc:
            _log.warning("could not record the use of key %s: %s", row.api_key_id, exc.what)
