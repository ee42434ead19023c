"""The cases that used to stick a pipeline: corrections consumed with the version they correct,
snapshot history taken in one catch-up, and what a dataset that does stay stuck says."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from tests.support.project import assert_sound, write

pytestmark = pytest.mark.spark


def document(s: str) -> str:
    return f"""
version: 1
source_systems:
  - id: shop{s}
    options: {{root: landing}}
source_objects:
  - id: sales{s}_csv
    system: shop{s}
    locator: "sales/*.csv"
    options: {{header: "true"}}
    dataset: bronze_sales{s}
    columns:
      - {{name: month, type: string}}
      - {{name: store, type: bigint}}
      - {{name: amount, type: double}}
  - id: stores{s}_csv
    system: shop{s}
    locator: "stores/*.csv"
    options: {{header: "true"}}
    dataset: bronze_stores{s}
    columns:
      - {{name: store, type: bigint}}
      - {{name: city, type: string}}
      - {{name: as_of, type: timestamp}}
datasets:
  - {{id: bronze_sales{s}, layer: bronze}}
  - id: silver_sales{s}
    layer: silver
    parents: [bronze_sales{s}]
    business_keys: [month, store]
  - {{id: bronze_stores{s}, layer: bronze}}
  - id: silver_stores{s}
    layer: silver
    parents: [bronze_stores{s}]
    load_type: scd2
    business_keys: [store]
    sequence_by: as_of
rules:
  - {{id: sales_unique{s}, dataset: silver_sales{s}, type: UNIQUE, columns: [month, store], severity: FAIL}}
  - {{id: stores_unique{s}, dataset: silver_stores{s}, type: UNIQUE, columns: [store], severity: FAIL}}
"""


def deliver(root: Path, folder: str, name: str, header: str, rows: list[str]) -> None:
    write(root / "landing" / folder / name, header + "\n" + "\n".join(rows) + "\n")


@pytest.fixture
def shop(
    shared_lakehouse: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[Any, str, Path]:
    suffix = "_" + re.sub(r"[^a-z0-9]", "", request.node.name.lower())[-16:]
    lh = shared_lakehouse
    lh.apply(write(tmp_path / "shop.yaml", document(suffix)))
    return lh, suffix, tmp_path


def test_a_correction_consumed_with_the_version_it_corrects_promotes_cleanly(
    shop: tuple[Any, str, Path],
) -> None:
    lh, s, root = shop
    sales = "month,store,amount"
    deliver(
        root, "sales", "jan.csv", sales, ["2026-01,1,100.0", "2026-01,2,200.0", "2026-02,1,50.0"]
    )
    assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    # the supplier re-sends January with corrected values, under the same keys
    deliver(root, "sales", "jan_fix.csv", sales, ["2026-01,1,110.0", "2026-01,2,190.0"])
    assert lh.run(f"bronze_sales{s}").status == "COMPLETED"

    result = lh.run(f"silver_sales{s}")  # consumes bronze v1..v2 in one batch
    assert result.status == "COMPLETED", result.error
    (step,) = result.steps
    assert {o.rule_id: o.outcome for o in step.outcomes}[f"sales_unique{s}"] == "PASS"
    rows = {(r.month, r.store): r.amount for r in lh.read(f"silver_sales{s}").collect()}
    assert rows == {("2026-01", 1): 110.0, ("2026-01", 2): 190.0, ("2026-02", 1): 50.0}
    (version,) = StoreReader(lh.store).versions.versions(f"silver_sales{s}")
    assert version.upstream_refs == {f"bronze_sales{s}": 2}
    assert lh.replay(f"silver_sales{s}", 1).matches
    assert_sound(lh, f"bronze_sales{s}", f"silver_sales{s}")


def calls_of(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[tuple[Any, ...]]:
    """The arguments of every call of `module.name` from now on (each call still runs)."""
    calls: list[tuple[Any, ...]] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_small_catch_up_into_the_table_is_folded_once_and_one_that_changes_nothing_is_no_version(
    shop: tuple[Any, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from openlaketx.loads import strategies

    lh, s, root = shop
    sales = "month,store,amount"
    deliver(root, "sales", "jan.csv", sales, ["2026-01,1,100.0", "2026-01,2,200.0"])
    assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    assert lh.run(f"silver_sales{s}").status == "COMPLETED"  # the table, from one version
    folds = calls_of(monkeypatch, strategies, "catch_up_source")
    for name, rows in [
        ("feb.csv", ["2026-02,1,50.0", "2026-01,2,210.0"]),
        ("fix.csv", ["2026-02,1,55.0"]),
    ]:
        deliver(root, "sales", name, sales, rows)
        assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    result = lh.run(f"silver_sales{s}")  # bronze v2..v3 in one batch, into the table
    assert result.status == "COMPLETED", result.error
    assert len(folds) == 1  # the novelty check's fold is the one merged
    rows = {(r.month, r.store): r.amount for r in lh.read(f"silver_sales{s}").collect()}
    assert rows == {("2026-01", 1): 100.0, ("2026-01", 2): 210.0, ("2026-02", 1): 55.0}
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"silver_sales{s}")] == [
        1,
        2,
    ]

    # two deliveries that only repeat what the table holds: counted, and nothing published
    for name, rows in [("mar.csv", ["2026-01,2,210.0"]), ("apr.csv", ["2026-02,1,55.0"])]:
        deliver(root, "sales", name, sales, rows)
        assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    again = lh.run(f"silver_sales{s}")
    assert again.status == "COMPLETED", again.error
    (step,) = again.steps
    assert step.data_version is None and "no row would change" in (step.reason or "")
    assert len(folds) == 2
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"silver_sales{s}")] == [
        1,
        2,
    ]
    assert lh.replay(f"silver_sales{s}", 2).matches

    # whether a batch fits delta-rs is asked once per step (the novelty check's answer goes
    # to the write): for a catch-up (bronze v4..v6, the no-op run above consumed none of them)
    # and for one version merged into the table
    from openlaketx.loads import small_merge

    fits = calls_of(monkeypatch, small_merge, "fits")
    folded = len(folds)  # the replay above folded too
    for name, row in [("may.csv", "2026-05,3,70.0"), ("jun.csv", "2026-06,3,75.0")]:
        fits.clear()
        deliver(root, "sales", name, sales, [row])
        assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
        merged = lh.run(f"silver_sales{s}")
        assert merged.status == "COMPLETED", merged.error
        assert len(fits) == 1
    assert len(folds) == folded + 1  # the catch-up's; one version is not folded
    versions = StoreReader(lh.store).versions.versions(f"silver_sales{s}")
    assert [v.version for v in versions] == [1, 2, 3, 4]
    assert [v.upstream_refs[f"bronze_sales{s}"] for v in versions][-2:] == [6, 7]
    assert_sound(lh, f"bronze_sales{s}", f"silver_sales{s}")


def test_three_snapshots_taken_in_one_catch_up_keep_the_exact_history(
    shop: tuple[Any, str, Path],
) -> None:
    lh, s, root = shop
    stores = "store,city,as_of"
    snapshots = [
        ["1,Lyon,2026-01-01 00:00:00", "2,Nice,2026-01-01 00:00:00"],
        [
            "1,Lyon,2026-02-01 00:00:00",
            "2,Nantes,2026-02-01 00:00:00",
            "3,Metz,2026-02-01 00:00:00",
        ],
        [
            "1,Lille,2026-03-01 00:00:00",
            "2,Nantes,2026-03-01 00:00:00",
            "3,Metz,2026-03-01 00:00:00",
        ],
    ]
    for i, rows in enumerate(snapshots, 1):
        deliver(root, "stores", f"snap{i}.csv", stores, rows)
        assert lh.run(f"bronze_stores{s}").status == "COMPLETED"

    result = lh.run(f"silver_stores{s}")
    assert result.status == "COMPLETED", result.error
    history = sorted(
        (r.store, r.city, r.valid_from, r.valid_to, r.is_current)
        for r in lh.read(f"silver_stores{s}").collect()
    )
    jan, feb, mar = (datetime(2026, m, 1) for m in (1, 2, 3))
    # an unchanged city is no new version (the hash covers as_of, so each snapshot changes
    # it: every delivery is a version, closed by the next)
    assert history == [
        (1, "Lille", mar, None, True),
        (1, "Lyon", jan, feb, False),
        (1, "Lyon", feb, mar, False),
        (2, "Nantes", feb, mar, False),
        (2, "Nantes", mar, None, True),
        (2, "Nice", jan, feb, False),
        (3, "Metz", feb, mar, False),
        (3, "Metz", mar, None, True),
    ]
    assert lh.replay(f"silver_stores{s}", 1).matches
    assert_sound(lh, f"bronze_stores{s}", f"silver_stores{s}")


def test_a_dataset_blocked_again_and_again_on_the_same_input_says_it_is_stuck(
    shop: tuple[Any, str, Path],
) -> None:
    lh, s, root = shop
    sales = "month,store,amount"
    deliver(root, "sales", "jan.csv", sales, ["2026-01,1,100.0"])
    assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    assert lh.run(f"silver_sales{s}").status == "COMPLETED"
    # one delivery repeats a key within itself: that is a duplicate, not a correction
    deliver(root, "sales", "feb.csv", sales, ["2026-02,1,10.0", "2026-02,1,11.0"])
    assert lh.run(f"bronze_sales{s}").status == "COMPLETED"
    for _ in range(3):
        assert lh.run(f"silver_sales{s}").status == "BLOCKED"

    (status,) = [d for d in lh.status() if d.dataset_id == f"silver_sales{s}"]
    assert status.stuck is not None
    assert "blocked 3 times in a row" in status.stuck
    assert f"bronze_sales{s} v2 each time" in status.stuck
    assert "same reason since the first time" in status.stuck
    decision = lh.explain(f"silver_sales{s}")
    assert decision.stuck == status.stuck
    assert decision.advice[0].startswith("every run reads this input again")
    others = [d for d in lh.status() if d.dataset_id == f"bronze_sales{s}"]
    assert others[0].stuck is None
