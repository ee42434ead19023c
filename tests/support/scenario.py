"""One governed scenario that runs the same on any lakehouse: local or on an object store.

Deliveries of a small reference table (CSV files) go through a job of four datasets: a bronze
append (files archived once ingested), a silver merge, a silver scd2 history and a gold SQL
model. The third delivery is broken (blocked by the gate and quarantined); the fourth adds a
column (additive schema drift, promoted). Then `verify` and a `replay` of the silver merge.
What it returns is plain JSON (row counts, content hashes, decisions), so a run on an object
store can be compared with a local run of the same deliveries.

`python -m tests.support.scenario FEED ACTION...` does the actions (see `steps`) in a process of its
own on the lakehouse the `LAKETX_*` variables name (its Spark session gets s3a there), printing
what it saw as JSON lines; `arm:POINT` makes the next run die at a kill point.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
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


class Feed:
    """Where deliveries land: a local folder or an `s3://` prefix (written by a plain client)."""

    def __init__(self, root: str, fs: pafs.FileSystem | None = None) -> None:
        self.root = root
        self.fs = fs or pafs.LocalFileSystem()

    def _path(self, name: str) -> str:
        return f"{self.root.removeprefix('s3://')}/{name}"

    def put(self, name: str, text: str) -> None:
        if not self.root.startswith("s3://"):
            Path(self._path(name)).parent.mkdir(parents=True, exist_ok=True)
        with self.fs.open_output_stream(self._path(name)) as out:
            out.write(text.encode())

    def remove(self, name: str) -> None:
        self.fs.delete_file(self._path(name))

    def names(self, folder: str) -> list[str]:
        selector = pafs.FileSelector(self._path(folder), allow_not_found=True)
        return sorted(i.base_name for i in self.fs.get_file_info(selector))


def apply(lh: Any, feed: str) -> None:
    doc = Path(lh.config.home) / "scenario" / "ref.yaml"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(document(feed), encoding="utf-8")
    lh.apply(doc)


def report(lh: Any) -> dict[str, Any]:
    """What the lakehouse holds: versions (rows, content hash), quarantine, gold, the scd2
    history, `verify`, a replay of silver's newest version, and bronze's columns."""
    versions = {
        ds: [[v.version, v.row_count, v.content_hash] for v in lh.reader.versions.versions(ds)]
        for ds in DATASETS
    }
    quarantine = dataset_location(lh.warehouse, quarantine_name("bronze_ref"))
    quarantined = storage.delta_table(quarantine).to_pyarrow_table().num_rows
    return {
        "versions": versions,
        "quarantined": quarantined,
        "gold": [list(r) for r in lh.read("gold_ref_totals").select("n", "total").collect()],
        # scd2 validity is the run's clock, so its content hash differs run to run: the
        # history compared without it
        "history": sorted(
            [r["code"], r["name"], r["amount"], r["is_current"]]
            for r in lh.read("silver_ref_hist").collect()
        ),
        "violations": [f"{v.check} {v.where}: {v.what}" for v in lh.verify(set(DATASETS))],
        "replay_matches": lh.replay("silver_ref", versions["silver_ref"][-1][0]).matches,
        "columns": sorted(lh.read("bronze_ref").columns),
    }


BROKEN = 2  # the delivery the gate blocks: the operator takes it away after its run


def run_scenario(lh: Any, feed: Feed) -> dict[str, Any]:
    """Apply the project, run the job after each delivery; the statuses and the report."""
    apply(lh, feed.root)
    statuses = []
    for n, (name, text) in enumerate(DELIVERIES):
        feed.put(f"incoming/{name}", text)
        statuses.append(str(lh.run(JOB).status))
        if n == BROKEN:
            feed.remove(f"incoming/{name}")
    return {"statuses": statuses, **report(lh)}


def _die(*_args: Any, **_kwargs: Any) -> None:
    os._exit(137)


def arm(point: str) -> None:
    """Make this process die at `point` of its next run (no cleanup, like a SIGKILL)."""
    if point == "before_publish":
        import openlaketx.runner.promotion as step

        step.publish = _die  # type: ignore[assignment]
    elif point == "before_version":
        from lakeguard.actors.gate import Gate

        Gate.record_version = _die  # type: ignore[method-assign]
    elif point == "mid_move":  # every file copied to quarantine, the source not yet deleted
        move = storage.move_tree

        def copy_then_die(source: str, target: str) -> None:
            storage.remove_tree = _die
            move(source, target)

        storage.move_tree = copy_then_die
    else:
        raise SystemExit(f"unknown kill point {point}")


def _ran(result: Any) -> dict[str, Any]:
    refused = result.refused
    return {"run": str(result.status), "refused": type(refused).__name__ if refused else None}


def _holding(signal: Path) -> Callable[[str], None]:
    """A progress hook that, at the run's first stage (its leases held), says so by creating
    `<signal>.held` and waits for `<signal>.go`."""

    def progress(message: str) -> None:
        held = signal.with_suffix(".held")
        if message.endswith(": stage") and not held.exists():
            held.touch()
            while not signal.with_suffix(".go").exists():
                time.sleep(0.1)

    return progress


def steps(lh: Any, feed: Feed, actions: list[str]) -> None:
    """Do `actions` in order: apply, deliver:N, take:N (the operator removes delivery N), run,
    hold_run:SIGNAL, arm:POINT, report, scenario (each result printed as a JSON line)."""
    for action in actions:
        verb, _, arg = action.partition(":")
        if verb == "apply":
            apply(lh, feed.root)
        elif verb == "deliver":
            feed.put(f"incoming/{DELIVERIES[int(arg)][0]}", DELIVERIES[int(arg)][1])
        elif verb == "take":
            feed.remove(f"incoming/{DELIVERIES[int(arg)][0]}")
        elif verb == "run":
            print(json.dumps(_ran(lh.run(JOB))), flush=True)
        elif verb == "hold_run":  # holds in its first stage until ARG.go exists
            print(json.dumps(_ran(lh.run(JOB, progress=_holding(Path(arg))))), flush=True)
        elif verb == "arm":
            arm(arg)
        elif verb == "report":
            print(json.dumps(report(lh)), flush=True)
        elif verb == "scenario":
            print(json.dumps(run_scenario(lh, feed)), flush=True)
        else:
            raise SystemExit(f"unknown action {action}")


def feed_at(root: str) -> Feed:
    """The feed at `root`; on S3 through the object store the `LAKETX_S3_*` settings name."""
    if not root.startswith("s3://"):
        return Feed(root)
    from lakeguard.records.objectstore import ObjectStoreSettings

    settings = ObjectStoreSettings.from_env()
    keys = settings.storage_options()
    fs = pafs.S3FileSystem(
        access_key=keys["AWS_ACCESS_KEY_ID"],
        secret_key=keys["AWS_SECRET_ACCESS_KEY"],
        endpoint_override=(settings.endpoint or "").split("://", 1)[-1],
        scheme="http",
        region=settings.region,
    )
    return Feed(root, fs)


def _child(root: str, actions: list[str]) -> int:
    from openlaketx.lakehouse import Lakehouse

    steps(Lakehouse.open(), feed_at(root), actions)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2:]))
