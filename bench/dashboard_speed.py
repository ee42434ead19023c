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
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lakeguard.actors.keys import Scope
from openlaketx.config import LakehouseConfig
from openlaketx.service.tenants import Tenants

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

BIN = Path(sys.executable).parent
CHROMIUM = Path(os.environ.get("LAKETX_CHROMIUM", "/usr/lib/chromium/chromium"))


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
    add_flags(parser)
    args = parser.parse_args(argv)
    from bench.recorded_history import project, record_history

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
    record("dashboard_speed", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
