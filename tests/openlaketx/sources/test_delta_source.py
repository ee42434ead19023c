"""Delta tables as sources: read incrementally by version, with the change data feed or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.sources.kinds.delta import SourceVersion
from tests.support.project import assert_sound, write

pytestmark = pytest.mark.spark


def document(s: str, root: Path, locator: str, extra: str = "") -> str:
    return f"""
source_systems:
  - {{id: lake{s}, kind: delta, options: {{root: "{root}"}}}}
source_objects:
  - id: orders{s}
    system: lake{s}
    locator: "{locator}"
    dataset: bronze_orders{s}{extra}
    columns: [{{name: id, type: bigint}}, {{name: amount, type: double}}]
datasets:
  - {{id: bronze_orders{s}, layer: bronze}}
  - {{id: silver_orders{s}, layer: silver, parents: [bronze_orders{s}], business_keys: [id]}}
"""


def amounts(lh: Any, dataset: str) -> dict[int, float]:
    return {r["id"]: r["amount"] for r in lh.read(dataset).select("id", "amount").collect()}


def test_new_versions_of_an_append_only_table_are_read_once(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_dapp"
    source = tmp_path / "src" / "orders"
    lh.sql(f"CREATE TABLE delta.`{source}` (id BIGINT, amount DOUBLE) USING DELTA")
    lh.sql(f"INSERT INTO delta.`{source}` VALUES (1, 10.0), (2, 20.0)")
    lh.apply(write(tmp_path / "d.yaml", document(s, tmp_path / "src", "orders")))
    assert lh.run(f"bronze_orders{s}").status == "COMPLETED"
    lh.sql(f"INSERT INTO delta.`{source}` VALUES (3, 30.0)")
    second = lh.run(f"bronze_orders{s}")
    assert second.status == "COMPLETED" and second.steps[0].rows_read == 1
    assert lh.read(f"bronze_orders{s}").count() == 3
    nothing = lh.run(f"bronze_orders{s}")
    assert nothing.steps[0].data_version is None
    progress = StoreReader(lh.store).versions.source_progress(f"bronze_orders{s}")
    assert progress.last(f"orders{s}", SourceVersion) == SourceVersion(source_version=2)

    lh.sql(f"UPDATE delta.`{source}` SET amount = 11.0 WHERE id = 1")  # no change feed
    refused = lh.run(f"bronze_orders{s}")
    assert refused.status == "FAILED"
    assert "enable delta.enableChangeDataFeed" in (refused.error or "")
    assert lh.read(f"bronze_orders{s}").count() == 3
    assert_sound(lh, f"bronze_orders{s}")


def test_a_table_by_name_with_a_change_feed_follows_updates(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_dcdf"
    source = tmp_path / "src2" / "orders"
    lh.sql(
        f"CREATE TABLE delta.`{source}` (id BIGINT, amount DOUBLE) USING DELTA "
        "TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    lh.sql("CREATE DATABASE IF NOT EXISTS shop")
    lh.sql(f"CREATE TABLE IF NOT EXISTS shop.orders{s} USING DELTA LOCATION '{source}'")
    lh.sql(f"INSERT INTO shop.orders{s} VALUES (1, 10.0), (2, 20.0)")
    lh.apply(write(tmp_path / "d.yaml", document(s, tmp_path, f"shop.orders{s}")))
    job = [f"bronze_orders{s}", f"silver_orders{s}"]
    for dataset in job:
        assert lh.run(dataset).status == "COMPLETED"
    lh.sql(f"UPDATE shop.orders{s} SET amount = 25.0 WHERE id = 2")
    lh.sql(f"INSERT INTO shop.orders{s} VALUES (3, 30.0)")
    for dataset in job:
        result = lh.run(dataset)
        assert result.status == "COMPLETED", result.error
    assert amounts(lh, f"silver_orders{s}") == {1: 10.0, 2: 25.0, 3: 30.0}
    assert lh.read(f"bronze_orders{s}").count() == 4  # 2 + the updated image + 1 new
    assert_sound(lh, f"bronze_orders{s}", f"silver_orders{s}")


def test_a_lookback_on_a_delta_source_is_refused_at_validate(tmp_path: Path) -> None:
    """A Delta source is followed by table version, never read again below a watermark: a
    lookback there would only seem to catch late rows, so it is refused with its field."""
    from lakeguard.rules.catalog.loader import load_file
    from lakeguard.words.errors import ValidationError

    doc = document("_dlb", tmp_path, "orders", extra="\n    lookback: 5")
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "d.yaml", doc))
    assert "lookback" in str(info.value)
    assert "a lookback is for sources read above a watermark" in str(info.value)
