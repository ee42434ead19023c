"""The http source end to end in a job, against a real local HTTP server: a gzip CSV export
fetched with a token in the query (as OpenCellID's is) and a paged JSON API read incrementally
by a watermark parameter, each into bronze and on to silver; nothing fetched twice; a bad
answer is put aside (or, under `on_bad_file: block`, fails the run) and loads nothing; a run
killed between fetching and committing loads each page once."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.sources.progress_rows import RejectedFileRow
from openlaketx.loads.staging import LANDING_DIR
from openlaketx.runner.news import nothing_new
from openlaketx.tables import dataset_location
from tests.support.http_server import CLIENT_ID, CLIENT_SECRET, TOKEN, Server
from tests.support.killing import kill_during_run
from tests.support.project import assert_sound, write

pytestmark = [pytest.mark.spark, pytest.mark.server]

TOKEN_ENV = "LAKETX_TEST_HTTP_TOKEN"

DOC = """
version: 1
source_systems:
  - id: ocid{s}
    kind: http
    options: {{base_url: "{url}", token_in: query, backoff_seconds: 0.01}}
    credential_ref: env:{env}
  - id: shop{s}
    kind: http
    options: {{base_url: "{url}", backoff_seconds: 0.01}}
    credential_ref: env:{env}
source_objects:
  - id: cells{s}
    system: ocid{s}
    locator: /downloads/cells{s}.csv.gz
    params: {{type: full}}
    options: {{header: "true"}}
    dataset: bronze_cells{s}
    columns:
      - {{name: radio, type: string}}
      - {{name: cell, type: bigint}}
      - {{name: lat, type: double}}
  - id: orders{s}
    system: shop{s}
    locator: /api/orders{s}
    format: json
    records: data
    paging: {{style: cursor, param: cursor, cursor_path: next}}
    load_type: incremental
    watermark_column: updated
    watermark_param: updated_since
    dataset: bronze_orders{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: amount, type: double}}
      - {{name: updated, type: bigint}}
datasets:
  - {{id: bronze_cells{s}, layer: bronze}}
  - {{id: silver_cells{s}, layer: silver, parents: [bronze_cells{s}], business_keys: [radio, cell]}}
  - {{id: bronze_orders{s}, layer: bronze}}
  - {{id: silver_orders{s}, layer: silver, parents: [bronze_orders{s}], business_keys: [id], sequence_by: updated}}
rules:
  - {{id: lat_ok{s}, dataset: bronze_cells{s}, type: RANGE, column: lat, min: -90, max: 90, severity: FAIL}}
  - {{id: amount_ok{s}, dataset: bronze_orders{s}, type: NOT_NULL, columns: [amount], severity: FAIL}}
jobs:
  - id: feeds{s}
    tasks:
      - {{id: cells, dataset: bronze_cells{s}}}
      - {{id: clean_cells, dataset: silver_cells{s}, depends_on: [cells]}}
      - {{id: orders, dataset: bronze_orders{s}}}
      - {{id: clean_orders, dataset: silver_orders{s}, depends_on: [orders]}}
"""


def cells_csv(*rows: str) -> bytes:
    return gzip.compress(("radio,cell,lat\n" + "\n".join(rows) + "\n").encode())


def orders(*rows: tuple[int, float, int]) -> list[dict[str, Any]]:
    # (a field the document does not declare would be drift: tests/openlaketx/sources/test_http_feeds.py)
    return [{"id": i, "amount": a, "updated": u} for i, a, u in rows]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    found = Server()
    yield found
    found.stop()


@pytest.fixture
def feeds(shared_lakehouse: Any, server: Server, tmp_path: Path, request: Any) -> Any:
    """The project's ids (unique to the test), applied to the shared lakehouse."""
    s = "_" + request.node.name.lower().replace("test_", "")[-20:].replace("[", "").replace("]", "")
    s = "".join(c for c in s if c.isalnum() or c == "_")
    doc = write(tmp_path / "feeds.yaml", DOC.format(s=s, url=server.url, env=TOKEN_ENV))
    shared_lakehouse.apply(doc)
    return s


def rows(lh: Any, dataset: str) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(r)
        for r in lh.read(dataset)
        .drop(
            *[
                c
                for c in lh.read(dataset).columns
                if c.startswith("_laketx") or c in ("valid_from", "valid_to", "is_current")
            ]
        )
        .collect()
    )


def statuses(result: Any) -> dict[str, str]:
    return {s.dataset_id: s.status for s in result.steps}


def test_a_gzip_export_and_a_paged_api_feed_a_job_each_new_thing_once(
    shared_lakehouse: Any, server: Server, feeds: str
) -> None:
    lh, s = shared_lakehouse, feeds
    routes = server.routes
    routes.token_in = "query"  # the export takes the token in the query ...
    routes.put_file(f"/downloads/cells{s}.csv.gz", cells_csv("GSM,1,10.5", "LTE,2,20.5"))
    routes.records[f"/api/orders{s}"] = orders((1, 9.5, 100), (2, 3.0, 101), (3, 4.0, 102))

    # ... and the API in a header: one server, two ways; both are checked by the server
    routes.token_in = "either"
    first = lh.run(f"feeds{s}")
    assert first.status == "COMPLETED", first.error
    assert rows(lh, f"silver_cells{s}") == [("GSM", 1, 10.5), ("LTE", 2, 20.5)]
    assert rows(lh, f"silver_orders{s}") == [(1, 9.5, 100), (2, 3.0, 101), (3, 4.0, 102)]
    pages = [q for q in routes.seen(f"/api/orders{s}")]
    assert [q.query.get("cursor") for q in pages] == [None, "2"]  # two pages of two
    export = routes.seen(f"/downloads/cells{s}.csv.gz")[-1]
    assert export.query == {"type": "full", "token": TOKEN}
    assert all(TOKEN not in json.dumps(r, default=str) for r in lh.store.rows("source_progress"))

    # nothing new: known without a JVM (a 304 and an empty first page above the watermark)
    reader = StoreReader(lh.store)
    notes = nothing_new(
        reader,
        reader.definitions.registry(),
        [f"bronze_cells{s}", f"bronze_orders{s}"],
        str(lh.warehouse),
    )
    assert notes == {
        f"bronze_cells{s}": f"{server.url}/downloads/cells{s}.csv.gz?type=full has not changed "
        "since it was read",
        f"bronze_orders{s}": f"no records above 102 at {server.url}/api/orders{s}",
    }
    assert routes.seen(f"/downloads/cells{s}.csv.gz")[-1].status == 304
    again = lh.run(f"feeds{s}")
    assert again.status == "COMPLETED"
    assert [v.version for v in reader.versions.versions(f"bronze_orders{s}")] == [1]
    assert routes.seen(f"/api/orders{s}")[-1].query == {"updated_since": "102"}

    # a new export and newer records: only they come in
    routes.put_file(f"/downloads/cells{s}.csv.gz", cells_csv("GSM,1,11.0", "UMTS,3,1.0"))
    routes.records[f"/api/orders{s}"] += orders((2, 5.0, 103), (4, 1.0, 104))
    third = lh.run(f"feeds{s}")
    assert third.status == "COMPLETED", third.error
    assert rows(lh, f"silver_cells{s}") == [("GSM", 1, 11.0), ("LTE", 2, 20.5), ("UMTS", 3, 1.0)]
    assert rows(lh, f"silver_orders{s}") == [
        (1, 9.5, 100),
        (2, 5.0, 103),
        (3, 4.0, 102),
        (4, 1.0, 104),
    ]
    assert lh.read(f"bronze_orders{s}").count() == 5  # each record once
    assert not (
        Path(dataset_location(lh.warehouse, f"bronze.bronze_orders{s}")) / LANDING_DIR
    ).exists()
    assert_sound(
        lh, f"bronze_cells{s}", f"silver_cells{s}", f"bronze_orders{s}", f"silver_orders{s}"
    )


@pytest.mark.parametrize(
    ("body", "content_type", "said"),
    [
        (b"<!DOCTYPE html><title>Sign in</title>", "text/html", "is an HTML page, not csv"),
        (
            gzip.compress(b"radio,cell,lat\n" + b"GSM,1,1.0\n" * 5000)[:-40],
            "application/gzip",
            "is a truncated gzip",
        ),
    ],
    ids=["html", "truncated-gzip"],
)
def test_an_answer_that_is_not_the_declared_file_fails_and_loads_nothing_under_block(
    shared_lakehouse: Any,
    server: Server,
    feeds: str,
    tmp_path: Path,
    body: bytes,
    content_type: str,
    said: str,
) -> None:
    lh, s = shared_lakehouse, feeds
    doc = tmp_path / "feeds.yaml"  # the whole delivery or nothing: the run fails, as before
    doc.write_text(
        doc.read_text().replace(
            "params: {type: full}", "params: {type: full}\n    on_bad_file: block"
        )
    )
    lh.apply(doc)
    server.routes.token_in = "either"
    server.routes.raw[f"/downloads/cells{s}.csv.gz"] = (200, body, content_type, {})
    result = lh.run(f"bronze_cells{s}")
    assert result.status == "FAILED"
    assert said in str(result.error) and TOKEN not in str(result.error)
    assert lh.rejected_files(f"bronze_cells{s}") == []
    assert StoreReader(lh.store).versions.versions(f"bronze_cells{s}") == []
    assert lh.store.rows("source_progress", filters=[("dataset_id", "=", f"bronze_cells{s}")]) == []
    assert StoreReader(lh.store).runs.in_flight() == []  # no run left running
    table = Path(dataset_location(lh.warehouse, f"bronze.bronze_cells{s}"))
    assert not (table / "_delta_log").exists()  # no table, not even an empty one
    assert not (table / LANDING_DIR).exists()


def test_an_html_error_page_is_put_aside_and_not_fetched_again_while_unchanged(
    shared_lakehouse: Any, server: Server, feeds: str
) -> None:
    """Under `on_bad_file: reject` (the default) a login page served where the export should
    be is recorded as rejected, with its ETag; the next run's conditional request gets a 304
    and rejects nothing again; once the export is back it is loaded."""
    lh, s = shared_lakehouse, feeds
    routes, path = server.routes, f"/downloads/cells{s}.csv.gz"
    routes.token_in = "either"
    routes.put_file(path, b"<!DOCTYPE html><title>Sign in</title>", "text/html")
    first = lh.run(f"bronze_cells{s}")
    assert first.status == "COMPLETED" and first.steps[0].data_version is None
    assert "is an HTML page, not csv" in (first.steps[0].reason or "")
    (rejected,) = lh.rejected_files(f"bronze_cells{s}")
    assert rejected.path == f"{server.url}{path}?type=full" and rejected.kind == "HTTP_FILE"
    assert (rejected.reason or "").startswith("is an HTML page, not csv")
    assert TOKEN not in json.dumps(
        [r.as_row() for r in lh.store.read(RejectedFileRow)], default=str
    )

    reader = StoreReader(lh.store)  # nothing new, known without a JVM: a 304 for the page
    assert nothing_new(
        reader, reader.definitions.registry(), [f"bronze_cells{s}"], str(lh.warehouse)
    ) == {f"bronze_cells{s}": f"{server.url}{path}?type=full has not changed since it was rejected"}
    assert routes.seen(path)[-1].status == 304
    again = lh.run(f"bronze_cells{s}")
    assert again.status == "COMPLETED" and routes.seen(path)[-1].status == 304
    assert (
        len(lh.store.read(RejectedFileRow, filters=[("dataset_id", "=", f"bronze_cells{s}")])) == 1
    )

    routes.put_file(path, cells_csv("GSM,1,10.5", "LTE,2,20.5"))  # the export is back
    fixed = lh.run(f"bronze_cells{s}")
    assert fixed.status == "COMPLETED", fixed.error
    assert rows(lh, f"bronze_cells{s}") == [("GSM", 1, 10.5), ("LTE", 2, 20.5)]
    assert lh.rejected_files(f"bronze_cells{s}") == []
    assert lh.run(f"bronze_cells{s}").steps[0].data_version is None
    assert_sound(lh, f"bronze_cells{s}")


def test_a_truncated_gzip_from_a_server_without_validators_is_rejected_once(
    shared_lakehouse: Any, server: Server, feeds: str
) -> None:
    """No ETag nor Last-Modified: each run fetches the body again, knows it by its content
    hash as the body put aside, and records nothing more."""
    lh, s = shared_lakehouse, feeds
    path = f"/downloads/cells{s}.csv.gz"
    server.routes.token_in = "either"
    cut = gzip.compress(b"radio,cell,lat\n" + b"GSM,1,1.0\n" * 5000)[:-40]
    server.routes.raw[path] = (200, cut, "application/gzip", {})
    for _ in range(2):
        result = lh.run(f"bronze_cells{s}")
        assert result.status == "COMPLETED" and result.steps[0].data_version is None
    assert "has not changed since it was rejected" in (result.steps[0].reason or "")
    stored = lh.store.read(RejectedFileRow, filters=[("dataset_id", "=", f"bronze_cells{s}")])
    assert [r.reason for r in stored] == ["is a truncated gzip (its end is missing)"]
    assert len(server.routes.seen(path)) == 2  # fetched each time: nothing else can tell


@pytest.mark.parametrize("point", ["before_publish"])
def test_a_run_killed_between_fetching_and_committing_loads_each_page_once(
    shared_lakehouse: Any, server: Server, feeds: str, point: str
) -> None:
    lh, s = shared_lakehouse, feeds
    server.routes.token_in = "either"
    server.routes.records[f"/api/orders{s}"] = orders((1, 9.5, 100), (2, 3.0, 101), (3, 4.0, 102))
    assert lh.run(f"bronze_orders{s}").status == "COMPLETED"
    server.routes.records[f"/api/orders{s}"] += orders((4, 1.0, 103), (5, 2.0, 104), (6, 3.0, 105))

    kill_during_run(lh.config.home, point, f"bronze_orders{s}")
    fetched = [q.query.get("updated_since") for q in server.routes.seen(f"/api/orders{s}")]
    assert fetched[-2:] == ["102", "102"]  # the dead run fetched the two new pages

    retried = lh.run(f"bronze_orders{s}")
    assert retried.status == "COMPLETED", retried.error
    ids = sorted(r["id"] for r in lh.read(f"bronze_orders{s}").collect())
    assert ids == [1, 2, 3, 4, 5, 6]  # every record once, whichever point the run died at
    assert [v.version for v in StoreReader(lh.store).versions.versions(f"bronze_orders{s}")] == [
        1,
        2,
    ]
    assert lh.run(f"bronze_orders{s}").status == "COMPLETED"  # and nothing is new after
    assert lh.read(f"bronze_orders{s}").count() == 6
    table = Path(dataset_location(lh.warehouse, f"bronze.bronze_orders{s}"))
    assert not (table / LANDING_DIR).exists()  # the dead run's fetch was swept
    assert_sound(lh, f"bronze_orders{s}")


ITEMS = """
version: 1
source_systems:
  - id: items{s}
    kind: http
    options:
      base_url: "{url}"
      backoff_seconds: 0.01
      requests_per_second: 20
      auth:
        type: oauth2_client_credentials
        token_url: "{url}/oauth/token"
        client_id: {client}
        client_secret_ref: env:{env}
        client_auth: body
source_objects:
  - id: items{s}
    system: items{s}
    locator: /api/items{s}
    format: json
    records: data
    paging: {{style: link, size_param: limit, size: 2, total_path: meta.total}}
    load_type: full
    dataset: bronze_items{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: updated, type: bigint}}
datasets:
  - {{id: bronze_items{s}, layer: bronze, load_type: full}}
"""


def test_an_oauth2_api_paged_by_link_headers_lands_each_record_with_no_secret_kept(
    shared_lakehouse: Any, server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, s = shared_lakehouse, "_oauth_link"
    monkeypatch.setenv("LAKETX_TEST_CLIENT_SECRET", CLIENT_SECRET)
    routes = server.routes
    routes.token_in = "oauth"
    routes.records[f"/api/items{s}"] = [{"id": i, "updated": 10 + i} for i in range(5)]
    doc = ITEMS.format(s=s, url=server.url, client=CLIENT_ID, env="LAKETX_TEST_CLIENT_SECRET")
    lh.apply(write(tmp_path / "items.yaml", doc))
    result = lh.run(f"bronze_items{s}")
    assert result.status == "COMPLETED", result.error
    assert sorted(r["id"] for r in lh.read(f"bronze_items{s}").collect()) == [0, 1, 2, 3, 4]
    # one token, then three pages of 2, 2 and 1 found by their Link headers; the total
    # says the third was the last, so no empty page was asked for
    assert [(q.path, q.query.get("after")) for q in routes.log] == [
        ("/oauth/token", None),
        (f"/api/items{s}", None),
        (f"/api/items{s}", "2"),
        (f"/api/items{s}", "4"),
    ]
    issued = list(routes.issued)
    kept = json.dumps(lh.store.rows("source_progress"), default=str) + json.dumps(
        lh.store.rows("source_systems"), default=str
    )
    assert all(secret not in kept for secret in (CLIENT_SECRET, *issued))
    assert_sound(lh, f"bronze_items{s}")
