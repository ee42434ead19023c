"""Full snapshots from PostgreSQL into scd2 history and merges with change detection and deletes."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from tests.support.postgres import PASSWORD
from tests.support.project import assert_sound, write

pytestmark = pytest.mark.spark

SECRET_ENV = "LAKETX_TEST_PG_PASSWORD"


def document(url: str, s: str, silver: str) -> str:
    return (
        textwrap.dedent(
            f"""
        source_systems:
          - id: hr{s}
            kind: jdbc
            options: {{url: "{url}", user: postgres}}
            credential_ref: {SECRET_ENV}
        source_objects:
          - id: people{s}
            system: hr{s}
            locator: public.people{s}
            dataset: bronze_people{s}
            load_type: full
            columns:
              - {{name: id, type: bigint}}
              - {{name: name, type: string}}
              - {{name: city, type: string}}
              - {{name: seen_at, type: timestamp}}
        datasets:
          - {{id: bronze_people{s}, layer: bronze, load_type: full}}
          - id: silver_people{s}
            layer: silver
            parents: [bronze_people{s}]
            business_keys: [id]
        """
        )
        + textwrap.indent(textwrap.dedent(silver).strip(), " " * 4)
        + "\n"
    )


@pytest.fixture
def people(postgres: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    suffix = "_" + "".join(ch for ch in request.node.name.lower() if ch.isalnum())[-16:]
    postgres.sql(
        f"CREATE TABLE people{suffix} (id bigint PRIMARY KEY, name text, city text, seen_at timestamp); "
        f"INSERT INTO people{suffix} VALUES (1, 'Ada', 'Oslo', '2026-01-01'), "
        "(2, 'Bob', 'Rome', '2026-01-01'), (3, 'Cy', 'Lima', '2026-01-01')"
    )
    monkeypatch.setenv(SECRET_ENV, PASSWORD)
    return suffix


def run_both(lh: Any, s: str) -> list[Any]:
    return [lh.run(d) for d in (f"bronze_people{s}", f"silver_people{s}")]


def test_scd2_keeps_history_and_closes_deleted_keys(
    shared_lakehouse: Any, postgres: Any, people: str, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, people
    silver = "load_type: scd2\ndelete_missing: soft\nhash_strategy: {exclude: [seen_at]}"
    lh.apply(write(tmp_path / "hr.yaml", document(postgres.url, s, silver)))
    assert all(r.status == "COMPLETED" for r in run_both(lh, s))
    postgres.sql(
        f"UPDATE people{s} SET city = 'Paris' WHERE id = 2; DELETE FROM people{s} WHERE id = 3; "
        f"INSERT INTO people{s} VALUES (4, 'Di', 'Kyiv', '2026-01-02'); "
        f"UPDATE people{s} SET seen_at = '2026-02-02' WHERE id = 1"  # not hashed: no new version
    )
    assert all(r.status == "COMPLETED" for r in run_both(lh, s))
    rows = lh.read(f"silver_people{s}").collect()
    history = sorted(
        (
            r["id"],
            r["city"],
            r["is_current"],
            r["valid_to"] is not None,
            r["_laketx_deleted_at"] is not None,
        )
        for r in rows
    )
    assert history == [
        (1, "Oslo", True, False, False),
        (2, "Paris", True, False, False),
        (2, "Rome", False, True, False),
        (3, "Lima", False, True, True),
        (4, "Kyiv", True, False, False),
    ]
    closed = next(r for r in rows if r["id"] == 2 and not r["is_current"])
    opened = next(r for r in rows if r["id"] == 2 and r["is_current"])
    assert closed["valid_to"] == opened["valid_from"]

    # the same snapshot again: no version anywhere
    again = run_both(lh, s)
    assert all(r.status == "COMPLETED" and r.steps[0].data_version is None for r in again)
    reader = StoreReader(lh.store)
    assert [v.version for v in reader.versions.versions(f"bronze_people{s}")] == [1, 2]
    assert [v.version for v in reader.versions.versions(f"silver_people{s}")] == [1, 2]

    postgres.sql(f"INSERT INTO people{s} VALUES (3, 'Cy', 'Quito', '2026-03-03')")  # back again
    assert all(r.status == "COMPLETED" for r in run_both(lh, s))
    current = {
        r["id"]: r["city"] for r in lh.read(f"silver_people{s}").where("is_current").collect()
    }
    assert current == {1: "Oslo", 2: "Paris", 3: "Quito", 4: "Kyiv"}
    assert_sound(lh, f"bronze_people{s}", f"silver_people{s}")


def test_merge_with_hard_deletes_rewrites_only_changed_rows(
    shared_lakehouse: Any, postgres: Any, people: str, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, people
    silver = "load_type: merge\ndelete_missing: hard\nhash_strategy: {include: [city]}"
    lh.apply(write(tmp_path / "hr.yaml", document(postgres.url, s, silver)))
    assert all(r.status == "COMPLETED" for r in run_both(lh, s))
    postgres.sql(
        f"UPDATE people{s} SET city = 'Paris' WHERE id = 2; DELETE FROM people{s} WHERE id = 3; "
        f"UPDATE people{s} SET name = 'Ada L.' WHERE id = 1"  # name is not hashed: kept as was
    )
    _, silver_run = run_both(lh, s)
    assert silver_run.status == "COMPLETED", silver_run.error
    assert silver_run.steps[0].rows_written == 2  # one update, one delete; id 1 untouched
    rows = {r["id"]: (r["name"], r["city"]) for r in lh.read(f"silver_people{s}").collect()}
    assert rows == {1: ("Ada", "Oslo"), 2: ("Bob", "Paris")}
    (latest,) = StoreReader(lh.store).versions.versions(f"silver_people{s}")[-1:]
    assert latest.row_count == 2
    assert_sound(lh, f"bronze_people{s}", f"silver_people{s}")
