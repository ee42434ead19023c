"""The same result whatever the batch boundaries (docs/design.md §5).

A derived dataset that catches up on several parent versions in one run ends with the same rows
(and the same content hash of what is live) as its twin that took them one run each, for every
load type: append, full, merge (with `sequence_by`, snapshots with hard and soft deletes), scd2
(with `sequence_by`, snapshots with soft and hard deletes) and SQL models (full refresh and by
key). Deliveries, skipped runs, blocked batches and runs killed between publishing and
recording are drawn at random; `verify` holds and the catch-up's versions replay.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lakeguard.gate import Gate
from lakeguard.store import StoreReader
from tests.boundaries import Pairs, live_hash, table_rows
from tests.conftest import assert_sound

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("LAKETX_PROPERTY_EXAMPLES", "1"))  # random ones, besides SCRIPTED
FAMILIES = {
    "append_full_models": (("append", "full", "merge"), ("model_full", "model_keys")),
    "merge": (("full", "merge_seq", "merge_hard", "merge_soft"), ()),
    "scd2": (("full", "scd2_seq", "scd2_soft", "scd2_hard"), ()),
}
_ids = itertools.count()

# one delivery: a snapshot of codes 1..4, each (name, amount, day of `seen`)
snapshot = st.dictionaries(
    st.integers(1, 4),
    st.tuples(st.sampled_from("ab"), st.integers(0, 2), st.integers(1, 3)),
    min_size=1,
)


@dataclass(frozen=True)
class Turn:
    rows: dict[int, tuple[str, int, int]]
    bad: bool  # the delivery breaks a bronze FAIL rule: blocked, then taken back
    catch_up: bool  # the catch-up twins run after it
    kill: str | None  # a dataset whose run dies after publishing, before recording


def turns(kinds: tuple[str, ...]) -> st.SearchStrategy[list[Turn]]:
    names = [f"{k}_{side}" for k in kinds for side in ("one", "all")]
    victims = st.sampled_from([None, None, None, "bronze", *names])
    bad = st.sampled_from([False, False, True])
    turn = st.builds(Turn, snapshot, bad, st.booleans(), victims)
    return st.lists(turn, min_size=2, max_size=3)


@contextmanager
def killed(dataset_id: str | None) -> Iterator[None]:
    """The run of `dataset_id` dies after its commit, before its version is recorded (the
    next run adopts the commit)."""
    if dataset_id is None:
        yield
        return
    real = Gate.record_version

    def die(self: Gate, **kw: Any) -> None:
        if kw["dataset_id"] == dataset_id:
            raise RuntimeError("killed after publishing")
        real(self, **kw)

    Gate.record_version = die  # type: ignore[method-assign]
    try:
        yield
    finally:
        Gate.record_version = real  # type: ignore[method-assign]


def play(lh: Any, pairs: Pairs, script: list[Turn]) -> None:
    """Deliver each turn, run the one-by-one job, and the catch-up job when the turn says."""
    for turn in script:
        rows = [(code, *values) for code, values in sorted(turn.rows.items())]
        if turn.bad:
            bad = pairs.deliver([*rows, (9, "z", -1, 1)])
            assert lh.run(pairs.job_one).status != "COMPLETED"
            bad.unlink()  # the supplier takes the broken delivery back
        pairs.deliver(rows)
        victim = None
        if turn.kill is not None:
            victim = pairs.bronze if turn.kill == "bronze" else pairs.ds(*turn.kill.rsplit("_", 1))
        with killed(victim):
            lh.run(pairs.job_one)
            if turn.catch_up:
                lh.run(pairs.job_all)
    # recover what was killed (its commit is adopted), then catch up on the rest
    for _ in range(2 if any(t.kill for t in script) else 1):
        assert lh.run(pairs.job_one).status == "COMPLETED"
        assert lh.run(pairs.job_all).status == "COMPLETED"


def assert_same(lh: Any, pairs: Pairs) -> None:
    for kind, one, caught_up in pairs.pairs():
        assert table_rows(lh, caught_up, kind) == table_rows(lh, one, kind), kind
        assert live_hash(lh, caught_up, kind) == live_hash(lh, one, kind), kind
    datasets = {pairs.bronze, *(d for _, one, all_ in pairs.pairs() for d in (one, all_))}
    assert_sound(lh, *datasets)
    reader = StoreReader(lh.store)
    for _, _, caught_up in pairs.pairs():
        latest = reader.approved(caught_up)
        assert latest is not None
        report = lh.replay(caught_up, latest.version)
        assert report.matches, (caught_up, report.comparisons)


def new_pairs(root: Path, family: str) -> Pairs:
    kinds, models = FAMILIES[family]
    n = next(_ids)
    pairs = Pairs(root / f"{family}{n}", f"_{family[:5]}{n}", kinds, models)
    pairs.write()
    return pairs


# Corrections under the same keys, a key that goes missing and comes back, a late row whose
# `seen` is older than the one already held, a blocked delivery, a kill: every case at once.
SCRIPTED = [
    Turn({1: ("a", 1, 1), 2: ("b", 2, 1), 3: ("a", 0, 1)}, False, True, None),
    Turn({1: ("a", 2, 2), 2: ("b", 2, 2), 4: ("b", 1, 2)}, True, False, "merge_seq_all"),
    Turn({1: ("b", 1, 1), 3: ("a", 2, 3), 4: ("b", 1, 3), 2: ("a", 0, 3)}, False, False, None),
]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_catch_up_equals_one_run_per_parent_version(
    shared_lakehouse: Any, tmp_path_factory: pytest.TempPathFactory, family: str
) -> None:
    lh = shared_lakehouse
    root = tmp_path_factory.mktemp("boundaries")

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(script=turns(FAMILIES[family][0]))
    @example(script=SCRIPTED)
    def check(script: list[Turn]) -> None:
        pairs = new_pairs(root, family)
        lh.apply(pairs.yaml)
        play(lh, pairs, script)
        assert_same(lh, pairs)

    check()
