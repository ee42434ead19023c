"""The API's key routes: a tenant's keys, and revoking one (the keys:admin scope)."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from typing import Annotated

from fastapi import APIRouter, Path

from lakeguard.actors.keys import ApiKey
from openlaketx.service.api.context import PREFIX, Administering, State

router = APIRouter(prefix=PREFIX)


@router.get("/keys")
def list_keys(key: Administering, api: State) -> list[ApiKey]:
    return api.tenants.keys.list(key.tenant_id)


@router.post("/keys/{key_id}/revoke")
def revoke_key(
    key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")], key: Administering, api: State
) -> ApiKey:
    return api.tenants.keys.revoke(key_id, key.tenant_id)
