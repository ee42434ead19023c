"""Incremental loads from a real PostgreSQL server over JDBC, through bronze into silver."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.sources.progress import WatermarkMark
from tests.support.killing import KILL_POINTS, kill_during_run
from tests.support.postgres import PASSWORD
from tests.support.project import assert_sound, write

pytestmark = pytest.mark.spark

SECRET_ENV = "LAKETX_TEST_PG_PASSWORD"


def project_yaml(url: str, s: str, *, lookback: str | None = None, table: str | None = None) -> str:
    extra = "\n" + " " * 12 + f'lookback: "{lookback}"' if lookback else ""
    return textwrap.dedent(
        f"""
        source_systems:
          - id: crm{s}
            kind: jdbc
            options: {{url: "{url}", user: postgres}}
            credential_ref: {SECRET_ENV}
        source_objects:
          - id: customers{s}
            system: crm{s}
            locator: public.{table or "customers" + s}
            dataset: bronze_customers{s}
            load_type: incremental
            watermark_column: updated_at{extra}
            partition_column: id
            lower_bound: 1
            upper_bound: 100
            num_partitions: 2
            columns:
              - {{name: id, type: bigint}}
              - {{name: name, type: string}}
              - {{name: region, type: string}}
              - {{name: amount, type: double}}
              - {{name: updated_at, type: timestamp}}
        datasets:
          - {{id: bronze_customers{s}, layer: bronze}}
          - id: silver_customers{s}
            layer: silver
            parents: [bronze_customers{s}]
            business_keys: [id]
            sequence_by: updated_at
        rules:
          - {{id: amount_positive{s}, dataset: bronze_customers{s}, type: RANGE, column: amount, min: 0, severity: FAIL}}
        jobs:
          - id: crm_job{s}
            tasks:
              - {{id: ingest, dataset: bronze_customers{s}}}
              - {{id: clean, dataset: silver_customers{s}, depends_on: [ingest]}}
        """
    )


@pytest.fixture
def crm(
    postgres: Any, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Any:
    suffix = "_" + "".join(ch for ch in request.node.name.lower() if ch.isalnum())[-20:]
    postgres.sql(
        f"CREATE TABLE customers{suffix} (id bigint PRIMARY KEY, name text, region text, "
        "amount double precision, updated_at timestamp NOT NULL)"
    )
    monkeypatch.setenv(SECRET_ENV, PASSWORD)
    doc = write(tmp_path / "crm.yaml", project_yaml(postgres.url, suffix))
    return suffix, doc


def silver(lh: Any, s: str) -> dict[int, tuple[str, str, float]]:
    rows = lh.read(f"silver_customers{s}").select("id", "name", "region", "amount").collect()
    return {r["id"]: (r["name"], r["region"], r["amount"]) for r in rows}


def test_incremental_loads_follow_inserts_and_updates_exactly(
    shared_lakehouse: Any, postgres: Any, crm: Any
) -> None:
    lh, (s, doc) = shared_lakehouse, crm
    lh.apply(doc)
    postgres.sql(
        f"INSERT INTO customers{s} VALUES (1, 'Ada', 'north', 10, '2026-01-01 10:00'), "
        "(2, 'Bob', 'south', 20, '2026-01-01 11:00'), (3, 'Cy', 'north', 30, '2026-01-01 12:00')"
    )
    first = lh.run(f"crm_job{s}")
    assert first.status == "COMPLETED", first.error
    assert silver(lh, s) == {
        1: ("Ada", "north", 10.0),
        2: ("Bob", "south", 20.0),
        3: ("Cy", "north", 30.0),
    }

    postgres.sql(
        f"UPDATE customers{s} SET region = 'east', amount = 25, updated_at = '2026-01-02 09:00' "
        f"WHERE id = 2; INSERT INTO customers{s} VALUES (4, 'Di', 'west', 40, '2026-01-02 10:00')"
    )
    second = lh.run(f"crm_job{s}")
    assert second.status == "COMPLETED", second.error
    assert [st.rows_read for st in second.steps] == [2, 2]  # only rows above the watermark
    assert silver(lh, s) == {
        1: ("Ada", "north", 10.0),
        2: ("Bob", "east", 25.0),
        3: ("Cy", "north", 30.0),
        4: ("Di", "west", 40.0),
    }
    assert lh.read(f"bronze_customers{s}").count() == 5  # 3 + the 2 new images, no repeat
    total = lh.sql(f"SELECT sum(amount) FROM silver.silver_customers{s}").first()[0]
    assert total == 105.0

    third = lh.run(f"crm_job{s}")  # nothing changed in the database
    assert third.status == "COMPLETED"
    assert all(st.data_version is None for st in third.steps)
    reader = StoreReader(lh.store)
    assert [v.version for v in reader.versions.versions(f"bronze_customers{s}")] == [1, 2]
    mark = reader.versions.source_progress(f"bronze_customers{s}").last(
        f"customers{s}", WatermarkMark
    )
    assert mark == WatermarkMark(watermark="2026-01-02 10:00:00.000000")
    assert_sound(lh, f"bronze_customers{s}", f"silver_customers{s}")


def test_a_lookback_catches_late_rows_and_the_merge_absorbs_the_repeats(
    shared_lakehouse: Any, postgres: Any, crm: Any, tmp_path: Path
) -> None:
    lh, (s, _) = shared_lakehouse, crm
    doc = write(tmp_path / "late.yaml", project_yaml(postgres.url, s, lookback="1 hour"))
    lh.apply(doc)
    postgres.sql(f"INSERT INTO customers{s} VALUES (1, 'Ada', 'north', 10, '2026-01-01 10:00')")
    assert lh.run(f"crm_job{s}").status == "COMPLETED"
    # a row committed late, stamped before the last watermark but within the lookback
    postgres.sql(f"INSERT INTO customers{s} VALUES (2, 'Bob', 'south', 20, '2026-01-01 09:30')")
    assert lh.run(f"crm_job{s}").status == "COMPLETED"
    assert silver(lh, s) == {1: ("Ada", "north", 10.0), 2: ("Bob", "south", 20.0)}
    # the lookback read Ada again; she is already in bronze, so only Bob landed
    assert lh.read(f"bronze_customers{s}").count() == 2
    # everything the lookback reads now is held already: nothing new, no version
    again = lh.run(f"bronze_customers{s}")
    assert again.status == "COMPLETED", again.error
    assert again.steps[0].data_version is None
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"bronze_customers{s}")] == [
        1,
        2,
    ]
    assert_sound(lh, f"bronze_customers{s}", f"silver_customers{s}")


def test_wrong_password_and_unreachable_database_are_clear_and_classified(
    shared_lakehouse: Any, postgres: Any, crm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, (s, doc) = shared_lakehouse, crm
    lh.apply(doc)
    monkeypatch.setenv(SECRET_ENV, "not-the-password-42")
    refused = lh.run(f"bronze_customers{s}")
    step = refused.steps[0]
    assert refused.status == "FAILED" and step.error is not None
    assert f"credential_ref {SECRET_ENV}" in step.error.what
    assert "not-the-password-42" not in json.dumps(step.error.to_dict())
    assert not step.error.transient

    monkeypatch.delenv(SECRET_ENV)
    missing = lh.run(f"bronze_customers{s}").steps[0]
    assert missing.error is not None and f"{SECRET_ENV} is not set" in missing.error.what

    monkeypatch.setenv(SECRET_ENV, PASSWORD)
    closed = f"jdbc:postgresql://127.0.0.1:{postgres.port + 1}/postgres"
    lh.apply(write(tmp_path / "closed.yaml", project_yaml(closed, s)))
    unreachable = lh.run(f"bronze_customers{s}").steps[0]
    assert unreachable.error is not None and unreachable.error.transient
    assert "cannot reach the database" in unreachable.error.what
    assert StoreReader(lh.store).versions.versions(f"bronze_customers{s}") == []


def test_a_watermark_of_the_wrong_type_is_refused_at_validate(tmp_path: Path) -> None:
    from lakeguard.rules.catalog.loader import load_file
    from lakeguard.words.errors import ValidationError

    bad = project_yaml("jdbc:postgresql://h/db", "_x").replace(
        "watermark_column: updated_at", "watermark_column: name"
    )
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "bad.yaml", bad))
    assert "a watermark must be numeric, a date or a timestamp" in str(info.value)


@pytest.mark.parametrize("point", KILL_POINTS)
@pytest.mark.subprocess
def test_a_killed_incremental_run_then_a_rerun_load_each_row_once(
    shared_lakehouse: Any, postgres: Any, crm: Any, point: str
) -> None:
    lh, (s, doc) = shared_lakehouse, crm
    lh.apply(doc)
    postgres.sql(
        f"INSERT INTO customers{s} VALUES (1, 'Ada', 'north', 10, '2026-01-01 10:00'), "
        "(2, 'Bob', 'south', 20, '2026-01-01 11:00')"
    )
    kill_during_run(lh.config.home, point, f"bronze_customers{s}")
    postgres.sql(f"INSERT INTO customers{s} VALUES (3, 'Cy', 'north', 30, '2026-01-01 12:00')")
    rerun = lh.run(f"bronze_customers{s}")
    assert rerun.status == "COMPLETED", rerun.error
    ids = sorted(r["id"] for r in lh.read(f"bronze_customers{s}").select("id").collect())
    if point == "before_version":  # the published batch is adopted; row 3 comes next run
        assert lh.run(f"bronze_customers{s}").status == "COMPLETED"
        ids = sorted(r["id"] for r in lh.read(f"bronze_customers{s}").select("id").collect())
    assert ids == [1, 2, 3]
    assert_sound(lh, f"bronze_customers{s}")
