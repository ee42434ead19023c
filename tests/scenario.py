"""One governed scenario that runs the same on any lakehouse: local or on an object store.

Deliveries of a small reference table (CSV files) go through a job of four datasets: a bronze
append (files archived once ingested), a silver merge, a silver scd2 history and a gold SQL
model. The third delivery is broken (blocked by the gate and quarantined); the fourth adds a
column (additive schema drift, promoted). Then `verify` and a `replay` of the silver merge.
What it returns is plain JSON (row counts, content hashes, decisions), so a run on an object
store can be compared with a local run of the same deliveries.

`python -m tests.scenario FEED` runs it in a process of its own on the lakehouse the
`LAKETX_*` variables name (its Spark session gets s3a there), printing the JSON last.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from openlaketx import storage
from openlaketx.tables import dataset_location, quarantine_name

JOB = "ref_daily"
DATASETS = ("bronze_ref", "silver_ref", "silver_ref_hist", "gold_ref_totals")
HEADER = "code,name,amount,seen"
DELIVERIES: list[tuple[str, str]] = [
    ("d1.csv", f"{HEADER}\n1,ant,10.5,1\n2,bee,20.0,1\n3,cat,30.25,1\n"),
    ("d2.csv", f"{HEADER}\n2,bee,21.0,2\n3,cat,30.25,2\n4,dog,40.0,2\n"),
    # a third of the amounts negative: bronze's range rule fails, the batch is quarantined
    ("d3.csv", f"{HEADER}\n5,eel,-1,3\n6,fox,-2,3\n7,gnu,70,3\n"),
    ("d4.csv", "code,name,amount,seen,city\n1,ant,11.5,4,Oslo\n8,hen,80,4,Rome\n"),
]


def document(feed: str) -> str:
    """The project, its file source rooted at `feed` (a folder or an `s3://` prefix)."""
    return textwrap.dedent(
        f"""
        version: 1
        source_systems:
          - id: drops
            kind: file
            options: {{root: "{feed}"}}
        source_objects:
          - id: ref_feed
            system: drops
            locator: "incoming/*.csv"
            format: csv
            options: {{header: "true"}}
            dataset: bronze_ref
            load_type: append
            archive: archive
            fail_behavior: quarantine
            schema_profile: additive
            columns:
              - {{name: code, type: int}}
              - {{name: name, type: string}}
              - {{name: amount, type: double}}
              - {{name: seen, type: int}}
        datasets:
          - {{id: bronze_ref, layer: bronze, table: bronze.ref}}
          - id: silver_ref
            layer: silver
            table: silver.ref
            parents: [bronze_ref]
            load_type: merge
            business_keys: [code]
            sequence_by: seen
          - id: silver_ref_hist
            layer: silver
            table: silver.ref_hist
            parents: [bronze_ref]
            load_type: scd2
            business_keys: [code]
            sequence_by: seen
            hash_strategy: {{exclude: [seen]}}
          - id: gold_ref_totals
            layer: gold
            table: gold.ref_totals
            parents: [silver_ref]
            sql: "SELECT count(*) AS n, sum(amount) AS total FROM silver_ref"
        rules:
          - {{id: ref_amount_positive, dataset: bronze_ref, type: RANGE, column: amount,
             min: 0, severity: FAIL, threshold: 0.1}}
          - {{id: ref_key_unique, dataset: silver_ref, type: UNIQUE, columns: [code],
             severity: FAIL}}
        jobs:
          - id: {JOB}
            tasks:
              - {{id: ingest, dataset: bronze_ref}}
              - {{id: merge, dataset: silver_ref, depends_on: [ingest]}}
              - {{id: hist, dataset: silver_ref_hist, depends_on: [ingest]}}
              - {{id: gold, dataset: gold_ref_totals, depends_on: [merge]}}
        """
    ).lstrip()


def local_writer(root: Path) -> Callable[[str, str], None]:
    def put(name: str, text: str) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    return put


def s3_writer(fs: pafs.FileSystem, prefix: str) -> Callable[[str, str], None]:
    def put(name: str, text: str) -> None:
        with fs.open_output_stream(f"{prefix.removeprefix('s3://')}/{name}") as out:
            out.write(text.encode())

    return put


def run_scenario(lh: Any, feed: str, put: Callable[[str, str], None]) -> dict[str, Any]:
    """Apply the project, run the job after each delivery, verify and replay; what it saw."""
    doc = Path(lh.config.home) / "scenario" / "ref.yaml"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(document(feed), encoding="utf-8")
    lh.apply(doc)
    statuses = []
    for name, text in DELIVERIES:
        put(f"incoming/{name}", text)
        statuses.append(str(lh.run(JOB).status))
    versions = {
        ds: [(v.version, v.row_count, v.content_hash) for v in lh.reader.versions(ds)]
        for ds in DATASETS
    }
    quarantine = dataset_location(lh.warehouse, quarantine_name("bronze_ref"))
    quarantined = storage.delta_table(quarantine).to_pyarrow_table().num_rows
    gold = [tuple(r) for r in lh.read("gold_ref_totals").collect()]
    violations = [f"{v.check} {v.where}: {v.what}" for v in lh.verify(set(DATASETS))]
    replayed = lh.replay("silver_ref", versions["silver_ref"][-1][0])
    return {
        "statuses": statuses,
        "versions": versions,
        "quarantined": quarantined,
        "gold": gold,
        "violations": violations,
        "replay_matches": replayed.matches,
        "columns": sorted(lh.read("bronze_ref").columns),
    }


def _child(feed: str) -> int:
    from lakeguard.store.objectstore import ObjectStoreSettings
    from openlaketx.lakehouse import Lakehouse

    lh = Lakehouse.open()
    if feed.startswith("s3://"):
        settings = ObjectStoreSettings.from_env()
        keys = settings.storage_options()
        fs = pafs.S3FileSystem(
            access_key=keys["AWS_ACCESS_KEY_ID"],
            secret_key=keys["AWS_SECRET_ACCESS_KEY"],
            endpoint_override=(settings.endpoint or "").split("://", 1)[-1],
            scheme="http",
            region=settings.region,
        )
        put = s3_writer(fs, feed)
    else:
        put = local_writer(Path(feed))
    found = run_scenario(lh, feed, put)
    print(json.dumps(found), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
