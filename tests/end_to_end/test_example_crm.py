"""The repository's second example (examples/crm): PostgreSQL → bronze → scd2 → gold SQL model."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from tests.support.project import assert_sound

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "crm"


@pytest.fixture
def crm_example(postgres: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tests.support.postgres import PASSWORD

    postgres.sql("CREATE DATABASE crm_example")
    postgres.sql((EXAMPLE / "seed.sql").read_text(), database="crm_example")
    folder = tmp_path / "crm"
    shutil.copytree(EXAMPLE, folder)
    doc = folder / "crm.yaml"
    doc.write_text(
        doc.read_text().replace(
            "jdbc:postgresql://localhost:5432/postgres", postgres.url_of("crm_example")
        )
    )
    monkeypatch.setenv("CRM_PASSWORD", PASSWORD)
    return doc


def gold(lh: Any) -> dict[str, tuple[int, float]]:
    rows = lh.read("gold_value_by_region").collect()
    return {r["region_name"]: (r["customers"], r["lifetime_value"]) for r in rows}


def test_the_crm_example_runs_daily_with_exact_history_and_aggregates(
    lakehouse: Any, postgres: Any, crm_example: Path
) -> None:
    lh = lakehouse
    lh.apply(crm_example)
    first = lh.run("crm_daily")
    assert first.status == "COMPLETED", first.error
    assert gold(lh) == {"North": (2, 1650.75), "South": (1, 800.0), "East": (1, 300.0)}

    postgres.sql(
        "UPDATE customers SET region_code = 'W', updated_at = '2026-11-02 08:00' "
        "WHERE customer_id = 2; "
        "UPDATE customers SET lifetime_value = 500.25, updated_at = '2026-11-02 09:00' "
        "WHERE customer_id = 3; "
        "INSERT INTO customers VALUES (5, 'Barbara Liskov', 'S', 999.99, '2026-11-02 10:00')",
        database="crm_example",
    )
    second = lh.run("crm_daily")
    assert second.status == "COMPLETED", second.error
    assert gold(lh) == {
        "North": (2, 1700.75),
        "South": (1, 999.99),
        "East": (1, 300.0),
        "West": (1, 800.0),
    }
    versions = lh.read("silver_customers").where("customer_id = 2").orderBy("valid_from").collect()
    assert [(v["region_code"], v["is_current"]) for v in versions] == [("S", False), ("W", True)]

    third = lh.run("crm_daily")  # nothing changed anywhere: no version anywhere
    assert third.status == "COMPLETED"
    assert all(step.data_version is None for step in third.steps)
    reader = StoreReader(lh.store)
    gold_version = reader.versions.versions("gold_value_by_region")[-1]
    assert gold_version.version == 2
    assert gold_version.upstream_refs == {"silver_customers": 2, "silver_regions": 1}
    assert_sound(lh, *[d.dataset_id for d in lh.reader.definitions.datasets()])
