"""API keys (no Spark): tokens secret scanners recognise, only hashes stored, constant-time
checks, expiry, revocation, rotation with an overlap, and a throttled last_used_at."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from lakeguard.actors.keys import PREFIX, KeyStore, Scope, key_id_of, new_token, token_hash
from lakeguard.words.errors import AuthError
from tests.support.project import copied_store

READ = (Scope.RUNS_READ,)


@pytest.fixture
def keys(empty_store_template: Path, tmp_path: Path) -> KeyStore:
    store = copied_store(empty_store_template, tmp_path / "meta")
    return KeyStore(store)


def test_a_token_has_a_prefix_a_key_id_192_random_bits_and_a_checksum() -> None:
    key_id, token = new_token()
    prefix, kid, secret, check = token.split("_")
    assert (prefix, kid) == (PREFIX, key_id) and len(secret) == 33 and len(check) == 6
    assert key_id_of(token) == key_id
    typo = token[:-7] + ("A" if token[-7] != "A" else "B") + token[-6:]
    assert key_id_of(typo) is None  # the checksum catches it before any lookup
    assert key_id_of("Bearer nonsense") is None
    assert len({new_token()[1] for _ in range(200)}) == 200


def test_only_a_hash_is_stored_and_a_key_authenticates_its_tenant(keys: KeyStore) -> None:
    record, token = keys.create("acme", (Scope.RUNS_TRIGGER, Scope.RUNS_READ))
    stored = keys._store.rows("api_keys", all_tenants=True)
    assert len(stored) == 1
    assert token not in str(stored) and stored[0]["api_key_hash"] == token_hash(token)
    assert stored[0]["tenant_id"] == "acme"
    found = keys.authenticate(token)
    assert found.tenant_id == "acme" and set(found.scopes) == {Scope.RUNS_TRIGGER, Scope.RUNS_READ}
    assert "api_key_hash" not in found.__dataclass_fields__
    assert [k.api_key_id for k in keys.list("acme")] == [record.api_key_id]
    assert keys.list("other") == []


def test_wrong_expired_revoked_keys_are_refused_without_naming_them(keys: KeyStore) -> None:
    _, token = keys.create("acme", READ)
    key_id = key_id_of(token)
    assert key_id is not None
    forged = f"{PREFIX}_{key_id}_{'A' * 33}_"
    forged += __import__("lakeguard.actors.keys", fromlist=["_checksum"])._checksum(forged[:-1])
    for bad in (forged, token + "x", ""):
        with pytest.raises(AuthError) as info:
            keys.authenticate(bad)
        assert token not in str(info.value) and token_hash(token) not in str(info.value)
    _, short = keys.create("acme", READ, expires_in=timedelta(seconds=-1))
    with pytest.raises(AuthError):
        keys.authenticate(short)
    keys.revoke(key_id)
    with pytest.raises(AuthError):
        keys.authenticate(token)


def test_rotation_gives_a_new_key_and_the_old_one_an_overlap(keys: KeyStore) -> None:
    old, token = keys.create("acme", READ, description="ci")
    new, fresh = keys.rotate(old.api_key_id, timedelta(hours=1))
    assert new.tenant_id == "acme" and new.scopes == READ and new.description == "ci"
    assert keys.authenticate(token).api_key_id == old.api_key_id  # still in its overlap
    assert keys.authenticate(fresh).api_key_id == new.api_key_id
    (listed_old,) = [k for k in keys.list("acme") if k.api_key_id == old.api_key_id]
    assert listed_old.expires_at is not None
    assert listed_old.expires_at <= keys._store.now() + timedelta(hours=1)
    keys.rotate(new.api_key_id, timedelta(0))
    with pytest.raises(AuthError):
        keys.authenticate(fresh)  # no overlap: the rotated key stops at once


def test_last_used_at_is_written_at_most_once_per_interval(
    keys: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltalake import DeltaTable

    from lakeguard.actors.keys import TOUCH_EVERY

    _, token = keys.create("acme", READ)
    location = keys._store.location("api_keys")
    start = keys._store.now()
    clock = {"now": start}
    monkeypatch.setattr(keys._store, "now", lambda: clock["now"])
    keys.authenticate(token)
    after_first = DeltaTable(location).version()
    (listed,) = keys.list("acme")
    assert listed.last_used_at == start
    for step in range(5):  # within the interval: no commit per request
        clock["now"] = start + TOUCH_EVERY * step / 5
        keys.authenticate(token)
    assert DeltaTable(location).version() == after_first
    # the interval has passed: the next request records its use once more, and only once
    clock["now"] = start + TOUCH_EVERY
    keys.authenticate(token)
    keys.authenticate(token)
    assert DeltaTable(location).version() == after_first + 1
    (listed,) = keys.list("acme")
    assert listed.last_used_at == start + TOUCH_EVERY


def test_recording_a_use_never_writes_back_a_revocation_made_meanwhile(
    keys: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request read the key before the revocation committed; its `last_used_at` write
    comes after. The key must stay revoked."""
    record, token = keys.create("acme", READ)
    touch = keys._touch

    def revoked_meanwhile(row: dict[str, object], now: object) -> None:
        keys.revoke(record.api_key_id)
        touch(row, now)  # type: ignore[arg-type]

    monkeypatch.setattr(keys, "_touch", revoked_meanwhile)
    keys.authenticate(token)  # read before the revocation: this request still gets in
    monkeypatch.undo()
    (listed,) = keys.list("acme")
    assert listed.revoked_at is not None and listed.last_used_at is not None
    with pytest.raises(AuthError):
        keys.authenticate(token)


def test_many_requests_at_once_with_a_new_key_all_get_in_and_record_one_use(
    keys: KeyStore,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from deltalake import DeltaTable

    _, token = keys.create("acme", READ)
    location = keys._store.location("api_keys")
    before = DeltaTable(location).version()
    with ThreadPoolExecutor(max_workers=16) as pool:
        found = list(pool.map(lambda _: keys.authenticate(token), range(32)))
    assert {k.tenant_id for k in found} == {"acme"}
    assert DeltaTable(location).version() == before + 1  # one use recorded, no conflicts


def test_exists_tells_a_created_key_id_whatever_its_state(keys: KeyStore) -> None:
    record, _ = keys.create("acme", READ)
    keys.revoke(record.api_key_id)
    assert keys.exists(record.api_key_id)  # the failure brake still checks its tokens
    assert not keys.exists(new_token()[0])


def test_the_worked_webhook_example_in_the_docs_signs_as_the_service_checks() -> None:
    from openlaketx.service.hooks import sign

    text = (Path(__file__).parents[3] / "docs" / "service.md").read_text()
    (shown,) = re.findall(r"X-LakeTx-Signature: (sha256=[0-9a-f]{64})", text)
    body = b'{"file": "orders_2026-01-01.csv"}'
    assert sign("whsec-example", "1767225600", "evt-0001", body) == shown
