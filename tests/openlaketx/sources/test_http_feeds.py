"""What real feeds send, end to end against the local HTTP server (issue "ingest what real
feeds send"): a lookback over paged records, an API that compares dates, numbers sent as
strings, nested JSON, fields the document does not declare, and a bad source left unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.sources.rows import SourceColumnRow
from openlaketx.runner.news import nothing_new
from tests.support.http_server import TOKEN, Server
from tests.support.project import assert_sound, write

pytestmark = [pytest.mark.spark, pytest.mark.server]

TOKEN_ENV = "LAKETX_TEST_HTTP_FEEDS_TOKEN"

HEAD = """
version: 1
source_systems:
  - id: api{s}
    kind: http
    options: {{base_url: "{url}", backoff_seconds: 0.01}}
    credential_ref: env:{env}
source_objects:
"""


def document(s: str, url: str, objects: str, datasets: str) -> str:
    """A document of one http system, the given source objects and datasets (ids suffixed)."""
    body = HEAD + objects + "datasets:\n" + datasets
    return body.format(s=s, url=url, env=TOKEN_ENV)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    found = Server()
    yield found
    found.stop()


@pytest.fixture
def suffix(request: Any) -> str:
    name = request.node.name.lower().replace("test_", "")
    return "_" + "".join(c for c in name if c.isalnum())[-18:]


def data_rows(lh: Any, dataset: str) -> list[dict[str, Any]]:
    """The dataset's rows without the engine's columns, sorted."""
    frame = lh.read(dataset)
    keep = [c for c in frame.columns if not c.startswith("_laketx")]
    return sorted(
        (r.asDict(recursive=True) for r in frame.select(*keep).collect()),
        key=lambda r: sorted((k, str(v)) for k, v in r.items()),
    )


LOOKBACK = """
  - id: orders{s}
    system: api{s}
    locator: /api/orders{s}
    format: json
    records: data
    paging: {{style: cursor, param: cursor, cursor_path: next}}
    load_type: incremental
    watermark_column: updated
    watermark_param: updated_since
    lookback: 5
    dataset: bronze_orders{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: amount, type: double}}
      - {{name: updated, type: bigint}}
"""


def test_a_lookback_over_records_reads_late_rows_and_lands_each_once(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 2: every run after the first failed with Spark's AnalysisException
    (`_corrupt_record` cannot be resolved) from dropping the re-read rows."""
    lh, s = shared_lakehouse, suffix
    datasets = "  - {{id: bronze_orders{s}, layer: bronze}}\n"
    lh.apply(write(tmp_path / "d.yaml", document(s, server.url, LOOKBACK, datasets)))
    path = f"/api/orders{s}"
    server.routes.records[path] = [
        {"id": 1, "amount": 1.0, "updated": 100},
        {"id": 2, "amount": 2.0, "updated": 101},
        {"id": 3, "amount": 3.0, "updated": 102},
    ]
    assert lh.run(f"bronze_orders{s}").status == "COMPLETED"
    # a late row, stamped below the watermark but within the lookback, and a new one
    server.routes.records[path] += [
        {"id": 4, "amount": 4.0, "updated": 99},
        {"id": 5, "amount": 5.0, "updated": 103},
        {"id": 2, "amount": 2.5, "updated": 101},  # a changed row in the window: not a repeat
    ]
    second = lh.run(f"bronze_orders{s}")
    assert second.status == "COMPLETED", second.error
    assert server.routes.seen(path)[-1].query.get("updated_since") == "97"
    assert [(r["id"], r["amount"]) for r in data_rows(lh, f"bronze_orders{s}")] == [
        (1, 1.0),
        (2, 2.0),
        (2, 2.5),
        (3, 3.0),
        (4, 4.0),
        (5, 5.0),
    ]
    third = lh.run(f"bronze_orders{s}")  # everything read again is held: nothing new
    assert third.status == "COMPLETED", third.error
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"bronze_orders{s}")] == [
        1,
        2,
    ]
    assert_sound(lh, f"bronze_orders{s}")


BY_DATE = """
  - id: events{s}
    system: api{s}
    locator: /api/events{s}
    format: json
    records: data
    paging: {{style: cursor, param: cursor, cursor_path: next}}
    load_type: incremental
    watermark_column: updated
    watermark_param: since
    watermark_format: date
    watermark_start: "2013-03-14"
    dataset: bronze_events{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: kind, type: string}}
      - {{name: updated, type: timestamp}}
"""


def test_an_api_that_compares_dates_gets_every_row_of_a_split_day_once(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 1: the watermark went out as stored (`since=2013-03-15 15:00:00.000000`), and an
    API that compares dates never returned the rest of that day."""
    lh, s = shared_lakehouse, suffix
    datasets = "  - {{id: bronze_events{s}, layer: bronze}}\n"
    lh.apply(write(tmp_path / "d.yaml", document(s, server.url, BY_DATE, datasets)))
    path = f"/api/events{s}"
    server.routes.dates[path] = ("since", "updated")
    server.routes.records[path] = [
        {"id": 1, "kind": "a", "updated": "2013-03-14T09:00:00"},
        {"id": 2, "kind": "b", "updated": "2013-03-15T15:00:00"},
        {"id": 0, "kind": "z", "updated": "2013-03-13T23:00:00"},  # before the start
    ]
    assert lh.run(f"bronze_events{s}").status == "COMPLETED"
    assert server.routes.seen(path)[0].query == {"since": "2013-03-14"}  # watermark_start
    assert sorted(r["id"] for r in data_rows(lh, f"bronze_events{s}")) == [1, 2]

    # the rest of the watermark's day, and the next day
    server.routes.records[path] += [
        {"id": 3, "kind": "c", "updated": "2013-03-15T16:00:00"},
        {"id": 4, "kind": "d", "updated": "2013-03-16T09:00:00"},
    ]
    second = lh.run(f"bronze_events{s}")
    assert second.status == "COMPLETED", second.error
    assert server.routes.seen(path)[-1].query.get("since") == "2013-03-15"
    assert sorted(r["id"] for r in data_rows(lh, f"bronze_events{s}")) == [1, 2, 3, 4]

    # the day read again holds nothing new: no version
    third = lh.run(f"bronze_events{s}")
    assert third.status == "COMPLETED", third.error
    assert server.routes.seen(path)[-1].query.get("since") == "2013-03-16"
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"bronze_events{s}")] == [
        1,
        2,
    ]
    assert sorted(r["id"] for r in data_rows(lh, f"bronze_events{s}")) == [1, 2, 3, 4]
    assert_sound(lh, f"bronze_events{s}")


STRINGS = """
  - id: cells{s}
    system: api{s}
    locator: /api/cells{s}
    format: json
    records: data
    paging: {{style: cursor, param: cursor, cursor_path: next}}
    load_type: incremental
    watermark_column: updated
    watermark_param: updated_since
    max_malformed_ratio: 0.5
    dataset: bronze_cells{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: year, type: int}}
      - {{name: lat, type: double}}
      - {{name: ok, type: boolean}}
      - {{name: day, type: date}}
      - {{name: at, type: timestamp}}
      - {{name: amount, type: "decimal(10,2)"}}
      - {{name: updated, type: bigint}}
"""


def cell(i: int, year: Any, updated: int) -> dict[str, Any]:
    return {
        "id": i,
        "year": year,
        "lat": 1.5 * i,
        "ok": i % 2 == 0,
        "day": "2013-03-15",
        "at": "2013-03-15T15:00:00Z",
        "amount": 9.99,
        "updated": updated,
    }


def test_numbers_sent_as_strings_are_typed_and_a_bad_one_names_its_field(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 3: `"year": "2013"` declared int made every record malformed, the reason naming
    no field."""
    lh, s = shared_lakehouse, suffix
    datasets = "  - {{id: bronze_cells{s}, layer: bronze}}\n"
    lh.apply(write(tmp_path / "d.yaml", document(s, server.url, STRINGS, datasets)))
    path = f"/api/cells{s}"
    server.routes.strings.add(path)  # every number and boolean as a JSON string
    server.routes.records[path] = [cell(1, 2013, 100), cell(2, 2014, 101), cell(3, "abc", 102)]
    result = lh.run(f"bronze_cells{s}")
    assert result.status == "COMPLETED", result.error
    loaded = data_rows(lh, f"bronze_cells{s}")
    assert [(r["id"], r["year"], r["lat"], r["ok"]) for r in loaded] == [
        (1, 2013, 1.5, False),
        (2, 2014, 3.0, True),
    ]
    first = loaded[0]
    assert str(first["day"]) == "2013-03-15" and str(first["at"]) == "2013-03-15 15:00:00"
    assert str(first["amount"]) == "9.99"
    assert dict(lh.read(f"bronze_cells{s}").dtypes)["year"] == "int"
    bad = lh.sql(f"SELECT _corrupt_record FROM quarantine.bronze_cells{s}").collect()
    assert len(bad) == 1
    assert bad[0][0].startswith("year: expected int, got string 'abc' | {")
    assert '"id":"3"' in bad[0][0]  # and the record itself, as it came
    assert result.steps[0].quarantined == 1


NESTED = """
  - id: users{s}
    system: api{s}
    locator: /api/users{s}
    format: json
    records: data
    paging: {{style: cursor, param: cursor, cursor_path: next}}
    load_type: incremental
    watermark_column: updated
    watermark_param: updated_since
    max_malformed_ratio: 0.5
    dataset: bronze_users{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: owner, type: "struct<name:string, since:date>"}}
      - {{name: tags, type: "array<string>"}}
      - {{name: attrs, type: "map<string, bigint>"}}
      - {{name: updated, type: bigint}}
"""
NESTED_DATASETS = """
  - {{id: bronze_users{s}, layer: bronze}}
  - {{id: silver_users{s}, layer: silver, parents: [bronze_users{s}], business_keys: [id], sequence_by: updated}}
  - id: silver_owners{s}
    layer: silver
    parents: [bronze_users{s}]
    columns: {{id: id, owner_name: owner.name, owner: owner, tags: tags, attrs: attrs}}
jobs:
  - id: users_job{s}
    tasks:
      - {{id: ingest, dataset: bronze_users{s}}}
      - {{id: merge, dataset: silver_users{s}, depends_on: [ingest]}}
      - {{id: map, dataset: silver_owners{s}, depends_on: [ingest]}}
"""


def user(i: int, name: Any, updated: int) -> dict[str, Any]:
    owner = {"name": name, "since": "2013-03-15"} if isinstance(name, str) else name
    return {"id": i, "owner": owner, "tags": ["a", str(i)], "attrs": {"k": i}, "updated": updated}


def test_nested_json_stays_typed_through_bronze_and_silver(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 4: struct, array and map columns, declared and validated without Spark, kept
    typed by bronze, a silver merge and a silver `columns` mapping."""
    lh, s = shared_lakehouse, suffix
    doc = document(s, server.url, NESTED, NESTED_DATASETS)
    lh.apply(write(tmp_path / "d.yaml", doc))
    path = f"/api/users{s}"
    server.routes.records[path] = [user(1, "Ada", 100), user(2, "Bob", 101), user(3, 42, 102)]
    first = lh.run(f"users_job{s}")
    assert first.status == "COMPLETED", first.error
    nested = {
        "owner": "struct<name:string,since:date>",
        "tags": "array<string>",
        "attrs": "map<string,bigint>",
    }
    for dataset in (f"bronze_users{s}", f"silver_users{s}"):
        types = dict(lh.read(dataset).dtypes)
        assert {k: types[k] for k in nested} == nested, dataset
    owners = lh.read(f"silver_owners{s}")
    assert {k: v for k, v in owners.dtypes if k in (*nested, "owner_name")} == {
        **nested,
        "owner_name": "string",
    }
    assert sorted(r["owner_name"] for r in owners.collect()) == ["Ada", "Bob"]
    # an owner that is no object does not fit its struct: the record is malformed, kept whole
    bad = lh.sql(f"SELECT _corrupt_record FROM quarantine.bronze_users{s}").collect()
    assert [r[0] for r in bad] == [
        '{"id": 3, "owner": 42, "tags": ["a", "3"], "attrs": {"k": 3}, "updated": 102}'
    ]

    server.routes.records[path] += [user(2, "Bea", 103)]  # a new image of 2: merged
    second = lh.run(f"users_job{s}")
    assert second.status == "COMPLETED", second.error
    rows = {r["id"]: r for r in lh.read(f"silver_users{s}").collect()}
    assert rows[2]["owner"]["name"] == "Bea" and rows[2]["tags"] == ["a", "2"]
    assert rows[2]["attrs"] == {"k": 2} and str(rows[1]["owner"]["since"]) == "2013-03-15"
    assert_sound(lh, f"bronze_users{s}", f"silver_users{s}", f"silver_owners{s}")


DRIFT = """
  - id: loose{s}
    system: api{s}
    locator: /api/loose{s}
    format: json
    records: data
    load_type: full
    dataset: bronze_loose{s}
    columns: [{{name: id, type: bigint}}, {{name: amount, type: double}}]
  - id: tight{s}
    system: api{s}
    locator: /api/tight{s}
    format: json
    records: data
    load_type: full
    schema_profile: strict
    dataset: bronze_tight{s}
    columns: [{{name: id, type: bigint}}, {{name: amount, type: double}}]
"""
DRIFT_DATASETS = """
  - {{id: bronze_loose{s}, layer: bronze, load_type: full}}
  - {{id: bronze_tight{s}, layer: bronze, load_type: full}}
"""


def test_fields_a_document_does_not_declare_are_drift_for_the_profile(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 5: undeclared fields were dropped silently; a CSV header's extra column was
    drift already. Now `column_added`, decided by the source's profile."""
    lh, s = shared_lakehouse, suffix
    lh.apply(write(tmp_path / "d.yaml", document(s, server.url, DRIFT, DRIFT_DATASETS)))
    records = [
        {"id": 1, "amount": 1.0, "note": "first", "meta": {"src": "x"}},
        {"id": 2, "amount": 2.0},
    ]
    server.routes.records[f"/api/loose{s}"] = records
    server.routes.records[f"/api/tight{s}"] = records

    loose = lh.run(f"bronze_loose{s}")  # additive: the new columns flow
    assert loose.steps[0].status == "SUCCESS", loose.steps[0].reason
    rows = data_rows(lh, f"bronze_loose{s}")
    assert rows[0] == {
        "id": 1,
        "amount": 1.0,
        "note": "first",
        "meta": '{"src": "x"}',
    }  # its JSON, as sent
    assert rows[1] == {"id": 2, "amount": 2.0, "note": None, "meta": None}
    logged = lh.store.rows("schema_change_log", filters=[("dataset_id", "=", f"bronze_loose{s}")])
    assert sorted((r["column_name"], r["change_kind"], r["decision"]) for r in logged) == [
        ("meta", "column_added", "ALLOW"),
        ("note", "column_added", "ALLOW"),
    ]
    declared = lh.store.definitions(SourceColumnRow, [("source_object_id", "=", f"loose{s}")])
    assert sorted(c.column_name for c in declared) == ["amount", "id", "meta", "note"]

    tight = lh.run(f"bronze_tight{s}")  # strict: blocked, nothing promoted
    step = tight.steps[0]
    assert step.status == "BLOCKED"
    assert "column_added note" in (step.reason or "") and "column_added meta" in (step.reason or "")
    assert StoreReader(lh.store).versions.versions(f"bronze_tight{s}") == []


BAD = """
  - id: export{s}
    system: api{s}
    locator: /files/export{s}.json
    format: json
    dataset: bronze_export{s}
    columns: [{{name: id, type: bigint}}, {{name: year, type: int}}]
  - id: feed{s}
    system: api{s}
    locator: /api/feed{s}
    format: json
    records: data
    load_type: full
    dataset: bronze_feed{s}
    columns: [{{name: id, type: bigint}}, {{name: year, type: int}}]
"""
BAD_DATASETS = """
  - {{id: bronze_export{s}, layer: bronze}}
  - {{id: bronze_feed{s}, layer: bronze, load_type: full}}
jobs:
  - id: bad_job{s}
    tasks:
      - {{id: export, dataset: bronze_export{s}}}
      - {{id: feed, dataset: bronze_feed{s}}}
"""


def test_a_source_blocked_as_wholly_malformed_is_not_quarantined_again_until_it_changes(
    shared_lakehouse: Any, server: Server, suffix: str, tmp_path: Path
) -> None:
    """Defect 6: a batch blocked as wholly malformed was fetched and quarantined again on
    every run of an unchanged source."""
    lh, s = shared_lakehouse, suffix
    lh.apply(write(tmp_path / "d.yaml", document(s, server.url, BAD, BAD_DATASETS)))
    export, feed = f"/files/export{s}.json", f"/api/feed{s}"
    bad_lines = b'{"id": 1, "year": "abc"}\n{"id": 2, "year": "n/a"}\n'
    server.routes.put_file(export, bad_lines, "application/json")
    server.routes.records[feed] = [{"id": 1, "year": "MMXIII"}]

    first = lh.run(f"bad_job{s}")
    assert [st.status for st in first.steps] == ["BLOCKED", "BLOCKED"]
    assert "year: expected int, got string 'abc'" in (first.steps[0].reason or "")
    reader = StoreReader(lh.store)  # known without a JVM too: a 304 for the rejected file
    notes = nothing_new(
        reader, reader.definitions.registry(), [f"bronze_export{s}"], str(lh.warehouse)
    )
    assert "has not changed since its batch was blocked as malformed" in notes[f"bronze_export{s}"]
    for _ in range(2):  # the same sources again: nothing new, nothing quarantined
        again = lh.run(f"bad_job{s}")
        assert again.status == "COMPLETED", again.error
        assert all(st.data_version is None for st in again.steps)
        assert all("blocked as malformed" in (st.reason or "") for st in again.steps), [
            st.reason for st in again.steps
        ]
    for dataset in (f"bronze_export{s}", f"bronze_feed{s}"):
        batches = lh.sql(
            f"SELECT count(DISTINCT _laketx_run_id) FROM quarantine.{dataset}"
        ).first()[0]
        assert batches == 1, dataset
    asked = server.routes.seen(export)
    assert asked[0].status == 200 and {a.status for a in asked[1:]} == {304}  # not fetched

    # fixed at the source: loaded
    server.routes.put_file(export, b'{"id": 1, "year": "2013"}\n', "application/json")
    server.routes.records[feed] = [{"id": 1, "year": 2013}]
    fixed = lh.run(f"bad_job{s}")
    assert fixed.status == "COMPLETED", fixed.error
    assert [st.data_version for st in fixed.steps] == [1, 1]
    for dataset in (f"bronze_export{s}", f"bronze_feed{s}"):
        assert [(r["id"], r["year"]) for r in data_rows(lh, dataset)] == [(1, 2013)]
    assert_sound(lh, f"bronze_export{s}", f"bronze_feed{s}")
