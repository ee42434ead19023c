"""How fast the dashboard's pages are, measured in a browser: time to first byte and full load of
the overview and of a dataset page, on a store with a history.

A fresh home gets N copies of the test suite's bronze -> silver project (2N datasets, N jobs)
and then R recorded job runs spread over the last days, without Spark: each run's rows (run
events, run history, the job run, steps, rule results and the dq summary, the profile, the
decision, the approved version, the trust score) are written as the engine records them,
through the store's typed rows and delta-rs, several runs to a commit so that recording stays
quick. Then `laketx serve` (a real uvicorn, its own process, no Spark warm-up, no scheduler)
serves the home on 127.0.0.1 and Debian's Chromium, driven by Playwright, logs in and loads each
page: one visit first, then --repeat visits, whose Navigation Timing gives time to first byte
(responseStart) and full load (loadEventEnd), p50 reported. The overview and one dataset page
are visited again and again (the service's snapshot cache warm); "dataset, each a first visit"
visits another dataset each time, none seen before (what a person clicking around meets).

    .venv/bin/python bench/dashboard_speed.py                  # 1,000 runs, 50 datasets, p50 of 5
    .venv/bin/python bench/dashboard_speed.py --runs 50 --projects 2 --repeat 1 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from lakeguard.evidence import CheckKind, CheckRecord, CheckResult, Evidence
from lakeguard.hashing import to_json
from lakeguard.keys import Scope
from lakeguard.store import MetadataStore
from lakeguard.store.runtime_rows import (
    DataVersionRow,
    DecisionRow,
    DqResultRow,
    PipelineRunRow,
    ProfileRow,
    RuleResultRow,
    RunEventRow,
    RunHistoryRow,
    RuntimeRow,
    StepLogRow,
    TrustScoreRow,
)
from lakeguard.store.store import utcnow
from lakeguard.vocabulary import (
    AttemptStatus,
    DqStatus,
    EventStatus,
    JobStatus,
    Outcome,
    StepStatus,
)
from openlaketx.config import LakehouseConfig
from openlaketx.service.tenants import Tenants

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = Path(os.environ.get("LAKETX_CHROMIUM", "/usr/lib/chromium/chromium"))
EVERY = timedelta(minutes=10)  # between two job runs of the history
COLUMNS = ("radio", "cell", "lat", "updated")
TRIGGERS = ("schedule", "schedule", "schedule", "api", "webhook", "file_arrival", "manual")
FULL_EVERY = 5  # batches between two full profiles (mean, distinct counts)


def project(work: Path, projects: int) -> list[Path]:
    """`projects` copies of the test suite's small bronze -> silver project."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import cells_yaml

    docs = []
    for i in range(projects):
        doc = work / f"p{i:02d}" / "cells.yaml"
        doc.parent.mkdir(parents=True)
        doc.write_text(cells_yaml(f"_p{i:02d}"))
        docs.append(doc)
    return docs


class History:
    """The rows of a recorded history, run after run, as the engine would leave them."""

    def __init__(self, store: MetadataStore, projects: int, runs: int, seed: int) -> None:
        self.store, self.tenant = store, store.tenant
        self.projects, self.runs = projects, runs
        self.rng = random.Random(seed)
        self.versions: dict[str, int] = {}
        self.batches: dict[str, int] = {}
        self.first = utcnow() - EVERY * (runs + 1)

    def run(self, i: int) -> list[RuntimeRow]:
        """Job run `i`: its project's bronze attempt, then silver unless bronze was held."""
        p = i % self.projects
        job, logging_id = f"cells_job_p{p:02d}", uuid.uuid4().hex
        start = self.first + EVERY * i + timedelta(seconds=self.rng.uniform(0, 60))
        draw = self.rng.random()
        held, failed = draw < 0.08, 0.08 <= draw < 0.12
        trigger = self.rng.choice(TRIGGERS)
        rows: list[RuntimeRow] = []
        at = start
        outcome = JobStatus.COMPLETED
        for layer in ("bronze", "silver"):
            dataset = f"{layer}_cells_p{p:02d}"
            took = timedelta(seconds=self.rng.uniform(4, 40))
            if layer == "silver" and (held or failed):
                break
            status = (
                AttemptStatus.BLOCKED
                if held
                else AttemptStatus.FAILED
                if failed and layer == "bronze"
                else AttemptStatus.SUCCESS
            )
            rows += self.attempt(logging_id, job, dataset, layer, status, at, at + took, trigger)
            at += took
        if held:
            outcome = JobStatus.BLOCKED
        elif failed:
            outcome = JobStatus.FAILED
        rows.append(
            PipelineRunRow(
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                tenant_id=self.tenant,
                status=outcome,
                trigger_type=trigger,
                trigger_by="bench",
                start_time=start,
                end_time=at,
                duration_ms=int((at - start).total_seconds() * 1000),
                error_message="bench: a planted failure" if failed else None,
            )
        )
        rows += [
            RunEventRow(
                run_id=logging_id,
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                tenant_id=self.tenant,
                status=s,
                event_time=t,
                trigger_type=trigger,
                triggered_by="bench",
            )
            for s, t in ((EventStatus.RUNNING, start), (EventStatus(outcome), at))
        ]
        return rows

    def attempt(
        self,
        logging_id: str,
        job: str,
        dataset: str,
        layer: str,
        status: AttemptStatus,
        start: datetime,
        end: datetime,
        trigger: str,
    ) -> list[RuntimeRow]:
        run_id, rng, tenant = uuid.uuid4().hex, self.rng, self.tenant
        batch = self.batches[dataset] = self.batches.get(dataset, 0) + 1
        rows_in = rng.randint(800, 1200)
        rows: list[RuntimeRow] = [
            RunEventRow(
                run_id=run_id,
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                dataset_id=dataset,
                tenant_id=tenant,
                status=s,
                event_time=t,
            )
            for s, t in ((EventStatus.RUNNING, start), (EventStatus(status), end))
        ]
        rows += [
            StepLogRow(
                pipeline_logging_id=logging_id,
                tenant_id=tenant,
                step_name=f"{dataset}:{kind}",
                step_type=kind,
                step_index=k,
                dataset_id=dataset,
                status=StepStatus.COMPLETED,
                start_time=start + (end - start) * k / 4,
                end_time=start + (end - start) * (k + 1) / 4,
                duration_ms=int((end - start).total_seconds() * 250),
                rows_processed=rows_in,
            )
            for k, kind in enumerate(("read", "validate", "gate", "write"))
        ]
        if status == AttemptStatus.FAILED:  # an error before the gate: no decision
            return [*rows, self._history(run_id, logging_id, dataset, layer, status, start, end)]
        held = status == AttemptStatus.BLOCKED
        rules = (
            [
                (f"lat_range_{dataset[-3:]}", "RANGE", "FAIL"),
                (f"radio_known_{dataset[-3:]}", "ALLOWED_VALUES", "WARN"),
            ]
            if layer == "bronze"
            else [(f"silver_unique_{dataset[-3:]}", "UNIQUE", "FAIL")]
        )
        results = []
        for k, (rule_id, kind, severity) in enumerate(rules):
            failing = rng.randint(1, 60) if held and k == 0 else rng.choice([0, 0, 0, 1, 2])
            outcome = (
                Outcome.PASS if failing == 0 else Outcome.FAIL if k == 0 and held else Outcome.WARN
            )
            if severity == "FAIL" and not held:
                failing, outcome = 0, Outcome.PASS
            results.append(
                RuleResultRow(
                    run_id=run_id,
                    tenant_id=tenant,
                    dataset_id=dataset,
                    rule_id=rule_id,
                    rule_type=kind,
                    severity=severity,
                    columns=["lat"],
                    rows_evaluated=rows_in,
                    failed_rows=failing,
                    failed_ratio=failing / rows_in,
                    sample_values=["999.0"] if failing else [],
                    outcome=outcome,
                    executed_at=end,
                )
            )
        rows += results
        failed = [r for r in results if r.outcome != Outcome.PASS]
        rows.append(
            DqResultRow(
                pipeline_logging_id=logging_id,
                run_id=run_id,
                tenant_id=tenant,
                dataset_id=dataset,
                target_table=dataset.replace("_", ".", 1),
                dq_config_id="bench",
                executed_at=end,
                rows_evaluated=rows_in,
                expectations_passed=len(results) - len(failed),
                expectations_failed=len(failed),
                failed_expectations=to_json([{"rule_id": r.rule_id} for r in failed]),
                overall_status=DqStatus.FAIL if held else DqStatus.PASS,
            )
        )
        rows += self._profile(run_id, dataset, rows_in, batch, end)
        parent = dataset.replace("silver", "bronze")
        upstream = {} if layer == "bronze" else {parent: self.versions[parent]}
        evidence = Evidence(
            rules={r.rule_id: r.outcome for r in results},
            checks=(
                CheckRecord(
                    name="volume",
                    kind=CheckKind.POLICY,
                    result=CheckResult.PASS,
                    detail=f"{rows_in} rows",
                ),
            ),
            upstream=upstream,
        )
        rows.append(
            DecisionRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=run_id,
                from_layer="source" if layer == "bronze" else "bronze",
                to_layer=layer,
                allowed=not held,
                reason="blocked: lat out of range" if held else "every rule passed",
                evidence=to_json(evidence.to_json()),
                evaluated_at=end,
            )
        )
        version = self.versions.get(dataset, 0)
        if not held:
            version = self.versions[dataset] = version + 1
            rows.append(
                DataVersionRow(
                    tenant_id=tenant,
                    dataset_id=dataset,
                    version=version,
                    snapshot_ref=str(version),
                    schema_hash="bench",
                    row_count=rows_in * version,
                    rows_written=rows_in,
                    upstream_refs=to_json(upstream),
                    run_id=run_id,
                    promoted_at=end,
                    promoted_by=job,
                )
            )
        quality = 1.0 - (0.3 if held else 0.0) - rng.uniform(0, 0.05)
        rows.append(
            TrustScoreRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=run_id,
                score=int(100 * (0.5 * quality + 0.2 + 0.15 + 0.15)),
                quality=quality,
                freshness=1.0,
                stability=1.0,
                lineage=1.0,
                computed_at=end,
            )
        )
        history = self._history(run_id, logging_id, dataset, layer, status, start, end)
        return [*rows, history]

    def _history(
        self,
        run_id: str,
        logging_id: str,
        dataset: str,
        layer: str,
        status: AttemptStatus,
        start: datetime,
        end: datetime,
    ) -> RunHistoryRow:
        return RunHistoryRow(
            run_id=run_id,
            pipeline_logging_id=logging_id,
            tenant_id=self.tenant,
            dataset_id=dataset,
            layer=layer,
            status=status,
            start_time=start,
            end_time=end,
            rows_read=1000,
            rows_written=0 if status != AttemptStatus.SUCCESS else 1000,
            data_version=self.versions.get(dataset),
            error_message="bench: a planted failure" if status == AttemptStatus.FAILED else None,
            triggered_by="bench",
        )

    def _profile(
        self, run_id: str, dataset: str, rows_in: int, batch: int, at: datetime
    ) -> list[ProfileRow]:
        """The footer profile of every batch, the full one every FULL_EVERY batches, drifting."""
        rng, drift = self.rng, batch / 40
        metrics: list[tuple[str, str, str | None]] = [("*", "row_count", str(rows_in))]
        for column in COLUMNS:
            nulls = int(rows_in * max(0.0, rng.gauss(0.01 + 0.02 * drift, 0.005)))
            metrics += [
                (column, "null_count", str(nulls)),
                (column, "null_ratio", repr(round(nulls / rows_in, 6))),
                (column, "min", "0"),
                (column, "max", "90"),
            ]
            if batch % FULL_EVERY == 1:
                distinct = rows_in if column == "cell" else rng.randint(2, 40)
                metrics.append((column, "approx_distinct", str(distinct)))
                if column != "radio":
                    metrics.append((column, "mean", repr(rng.gauss(45 + 5 * drift, 1.0))))
        return [
            ProfileRow(
                run_id=run_id,
                tenant_id=self.tenant,
                dataset_id=dataset,
                column_name=c,
                metric=m,
                value=v,
                profiled_at=at,
            )
            for c, m, v in metrics
        ]


def record_history(store: MetadataStore, projects: int, runs: int, per_commit: int) -> None:
    """The history, `per_commit` job runs to a commit of each table (decisions and versions
    too: the gate records them one by one in a real run; here they are history)."""
    history = History(store, projects, runs, seed=22)
    chunk: list[RuntimeRow] = []
    for i in range(runs):
        chunk += history.run(i)
        if (i + 1) % per_commit == 0 or i + 1 == runs:
            store.append_rows(chunk, _by_gate=True)
            chunk = []
        if (i + 1) % 100 == 0:
            print(f"[bench] recorded {i + 1} runs", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(home: Path, port: int) -> subprocess.Popen[str]:
    """`laketx serve` on the home: no Spark warm-up (pages never start it), no scheduler."""
    server = subprocess.Popen(
        [
            str(BIN / "laketx"),
            "--home",
            str(home),
            "serve",
            "--port",
            str(port),
            "--no-warm-spark",
            "--scheduler-every",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"laketx serve ended: {server.stderr.read() if server.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("laketx serve did not listen within 60 s")


NAVIGATION = "JSON.stringify(performance.getEntriesByType('navigation')[0].toJSON())"
LOADED = "performance.getEntriesByType('navigation')[0].loadEventEnd > 0"


def visit(page: Any, url: str) -> dict[str, float]:
    """One navigation; its time to first byte and full load, in ms from its start."""
    answer = page.goto(url, wait_until="load")
    if answer is None or answer.status != 200:
        raise SystemExit(f"{url} answered {None if answer is None else answer.status}")
    page.wait_for_function(LOADED)
    timing = json.loads(page.evaluate(NAVIGATION))
    return {"ttfb_ms": timing["responseStart"], "load_ms": timing["loadEventEnd"]}


def measure(
    url: str, token: str, pages: dict[str, list[str]], repeat: int, shots: Path | None = None
) -> list[dict[str, Any]]:
    """Each page: a first visit of its first path, then `repeat` visits of its paths in turn
    (one path: the same page again, warm; several: each a page not visited before)."""
    from playwright.sync_api import sync_playwright

    found = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(url + "/login")
        page.fill("#key", token)
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")
        for name, paths in pages.items():
            first = visit(page, url + paths[0])
            samples = [visit(page, url + paths[(k + 1) % len(paths)]) for k in range(repeat)]
            if shots is not None:
                shots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
            found.append(
                {
                    "page": name,
                    "paths": paths,
                    "first": first,
                    "ttfb_ms": [s["ttfb_ms"] for s in samples],
                    "load_ms": [s["load_ms"] for s in samples],
                    "ttfb_p50_ms": statistics.median(s["ttfb_ms"] for s in samples),
                    "load_p50_ms": statistics.median(s["load_ms"] for s in samples),
                }
            )
        browser.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--projects", type=int, default=25, help="2 datasets and a job each")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-commit", type=int, default=10, help="job runs per commit")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--screenshots", type=Path, help="save each page's screenshot here")
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        raise SystemExit(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (Debian)")
    work = Path(tempfile.mkdtemp(prefix="laketx-dash-"))
    server = None
    try:
        home = work / "lakehouse"
        tenants = Tenants(LakehouseConfig.from_env(home=home))
        lh = tenants.get("default")
        for doc in project(work, args.projects):
            lh.apply(doc)
        started = time.perf_counter()
        record_history(lh.store, args.projects, args.runs, args.per_commit)
        recorded = time.perf_counter() - started
        print(
            f"[bench] recorded {args.runs} runs in {recorded:.0f}s (not measured)", file=sys.stderr
        )
        _, token = tenants.keys.create("default", (Scope.RUNS_READ,), description="bench")
        port = free_port()
        server = serve(home, port)
        others = [
            f"/datasets/{layer}_cells_p{i:02d}"
            for i in range(1, args.projects)
            for layer in ("bronze", "silver")
        ][: args.repeat + 1] or ["/datasets/bronze_cells_p00"]
        pages = {
            "overview": ["/"],
            "dataset": ["/datasets/silver_cells_p00"],
            "dataset, each a first visit": others,
        }
        results = {
            "runs": args.runs,
            "datasets": 2 * args.projects,
            "repeat": args.repeat,
            "pages": measure(
                f"http://127.0.0.1:{port}", token, pages, args.repeat, args.screenshots
            ),
        }
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(
            f"store with {results['runs']:,} job runs and {results['datasets']} datasets; "
            f"Chromium, Navigation Timing, p50 of {args.repeat} (first visit apart):"
        )
        print(
            f"  {'page':<28} {'TTFB p50':>10} {'load p50':>10} "
            f"{'first TTFB':>11} {'first load':>11}"
        )
        for r in results["pages"]:
            print(
                f"  {r['page']:<28} {r['ttfb_p50_ms']:8.0f} ms {r['load_p50_ms']:8.0f} ms "
                f"{r['first']['ttfb_ms']:8.0f} ms {r['first']['load_ms']:8.0f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
