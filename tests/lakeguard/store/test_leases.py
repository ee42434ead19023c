"""Whole-run leases on delta-rs (no Spark): all of a run's datasets at once or none of them,
never two runs on one dataset, and runs that share no dataset side by side."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.runs.coordination import LeaseEventRow
from lakeguard.store import MetadataStore, RunWriter
from lakeguard.store.leases import live_leases
from lakeguard.words.errors import WriteConflict
from lakeguard.words.vocabulary import LeaseAction
from openlaketx.runner.lease import LeaseHold
from tests.support.children import lease_race
from tests.support.project import copied_store

TTL = timedelta(minutes=5)


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> MetadataStore:
    s = copied_store(empty_store_template, tmp_path / "meta")
    return s


def test_a_run_takes_all_its_datasets_or_none(store: MetadataStore) -> None:
    writer, reader = RunWriter(store), StoreReader(store)
    held = writer.acquire_leases(["b", "a", "c"], "job1", ttl=TTL)
    assert sorted(lease.dataset_id for lease in held) == ["a", "b", "c"]
    assert {lease.run_id for lease in held} == {"job1"}

    # a second run wanting one of them gets none, not even the free one
    with pytest.raises(WriteConflict, match="being written by run job1") as refused:
        writer.acquire_leases(["d", "b"], "job2", ttl=TTL)
    assert refused.value.details["dataset_id"] == "b"
    assert reader.runs.lease("d") is None

    # a run that shares no dataset runs alongside
    (other,) = writer.acquire_leases(["d"], "job3", ttl=TTL)
    assert reader.runs.lease("d") == other

    renewed = writer.renew_leases(held, timedelta(minutes=10))
    assert all(r.expires_at > h.expires_at for r, h in zip(renewed, held, strict=True))
    writer.release_leases(renewed)
    assert all(reader.runs.lease(d) is None for d in "abc")
    assert reader.runs.lease("d") == other


def test_a_renewal_fails_when_any_lease_was_lost(store: MetadataStore) -> None:
    writer = RunWriter(store)
    held = writer.acquire_leases(["a", "b"], "job1", ttl=TTL)
    writer.release_lease(held[1])  # as if it had expired and someone else had taken it
    writer.acquire_leases(["b"], "job2", ttl=TTL)
    with pytest.raises(WriteConflict, match="lost its lease on b"):
        writer.renew_leases(held, TTL)


def test_the_fold_keeps_one_live_lease_per_dataset(store: MetadataStore) -> None:
    writer = RunWriter(store)
    first = writer.acquire_leases(["a", "b"], "job1", ttl=TTL)
    writer.release_leases(first[:1])
    second = writer.acquire_leases(["a"], "job2", ttl=TTL)
    events = store.read(LeaseEventRow)
    live = live_leases(events, store.now())
    assert live == {"a": second[0], "b": first[1]}
    assert live_leases(events, store.now(), is_dead=lambda _: True) == {}
    assert live_leases(events, max(lease.expires_at for lease in second)) == {}


@pytest.mark.subprocess
def test_two_processes_wanting_overlapping_datasets_never_both_win(
    store: MetadataStore, tmp_path: Path
) -> None:
    """Three processes at once, each wanting two of three datasets (every pair overlaps):
    exactly one gets its leases; no process ends up holding a part of what it asked for.
    They start from one line: each has read the table and chosen to take its two before any
    of them commits (tests/support/children.py asserts it)."""
    wants = ["a,b", "b,c", "c,a"]
    with lease_race(store.root, tmp_path / "race", wants) as outcomes:
        live = live_leases(store.read(LeaseEventRow), store.now())
    assert sorted(outcomes) == ["lost", "lost", "won"]
    winner = f"run{outcomes.index('won')}"
    assert {lease.run_id for lease in live.values()} == {winner}
    assert sorted(live) == sorted(wants[outcomes.index("won")].split(","))


def _releases(store: MetadataStore) -> list[str]:
    return sorted(
        e.dataset_id for e in store.read(LeaseEventRow) if e.action == LeaseAction.RELEASE
    )


def test_leases_handed_back_with_the_terminal_rows_are_released_once(
    store: MetadataStore,
) -> None:
    writer, reader = RunWriter(store), StoreReader(store)

    def terminal(rows: list[LeaseEventRow]) -> str:  # the run commits them with its own row
        assert reader.runs.lease("a") is not None  # nothing is given back until they are committed
        writer.append(rows)
        return "committed"

    with LeaseHold(writer, ["a", "b"], "job1", ttl=TTL) as hold:
        assert hold.released_with(terminal) == "committed"
    assert reader.runs.lease("a") is None and reader.runs.lease("b") is None
    assert _releases(store) == ["a", "b"]  # the block's end did not release them again


def test_leases_handed_back_but_not_committed_are_released_at_the_end(
    store: MetadataStore,
) -> None:
    writer, reader = RunWriter(store), StoreReader(store)

    def terminal(rows: list[LeaseEventRow]) -> None:
        raise RuntimeError("the terminal rows' commit failed")

    with pytest.raises(RuntimeError), LeaseHold(writer, ["a"], "job1", ttl=TTL) as hold:
        hold.released_with(terminal)
    assert reader.runs.lease("a") is None
    assert _releases(store) == ["a"]
