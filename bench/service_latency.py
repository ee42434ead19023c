"""What `laketx serve` buys: warm runs against cold CLI runs, API reads under load, a no-op
run without Java, and a cold start that registers only what a query names.

Four measurements, each against its baseline in the same run:

* **trigger to terminal**: a one-row delivery run through the API of a warm `laketx serve`,
  against the same delivery through `laketx run` in a new process (wall times, medians);
* **API reads**: 50 concurrent clients doing `GET /api/v1/runs` and `GET /api/v1/datasets`
  on a store with 1,000 recorded runs (p50, p99), against the same clients on
  `GET /api/v1/health`, which reads nothing;
* **no-op run**: `laketx run` when nothing is new, with no Java on PATH;
* **cold start**: `laketx sql "SELECT 1"` on a store with 50 registered datasets, against a
  bare SparkSession with the same jars running the same query (new processes both).

    .venv/bin/python bench/service_latency.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

READS = ("/api/v1/runs", "/api/v1/datasets")


def log(message: str) -> None:
    print(f"[service] {message}", file=sys.stderr, flush=True)


def laketx(home: Path, *args: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "laketx"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"laketx {' '.join(args)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def deliver(project: Path, name: str) -> None:
    folder = project / "feed" / "incoming"
    folder.mkdir(parents=True, exist_ok=True)
    n = len(list(folder.glob("*.csv"))) + 1
    (folder / name).write_text(f"radio,cell,lat,updated\nGSM,{n},10.0,{n}\n")


def setup(work: Path) -> tuple[Path, Path, str]:
    from tests.support.project import cells_yaml

    from lakeguard.actors.keys import Scope
    from openlaketx.config import LakehouseConfig
    from openlaketx.service.tenants import Tenants

    home, project = work / "home", work / "project"
    project.mkdir(parents=True)
    (project / "cells.yaml").write_text(cells_yaml(""))
    laketx(home, "apply", str(project / "cells.yaml"))
    tenants = Tenants(LakehouseConfig.from_env(home=home))
    _, token = tenants.keys.create("default", (Scope.RUNS_TRIGGER, Scope.RUNS_READ))
    return home, project, token


class Server:
    def __init__(self, home: Path) -> None:
        command = [str(BIN / "laketx"), "--home", str(home), "serve", "--port", "0"]
        self.proc = subprocess.Popen(
            [*command, "--scheduler-every", "0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if "listening on" in line:
                self.url = line.split("listening on ")[1].split("/api/v1")[0]
                break
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=600)


def trigger_to_terminal(url: str, token: str, job: str = "cells_job") -> float:
    """Seconds from POSTing a run of `job` to its terminal status (COMPLETED, or exit)."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
        started = time.perf_counter()
        run_id = http.post(f"/api/v1/jobs/{job}/runs").json()["run_id"]
        while True:  # a long poll: the answer comes when the run ends
            status = http.get(f"/api/v1/runs/{run_id}", params={"wait": 60}).json()["status"]
            if status in ("COMPLETED", "BLOCKED", "FAILED"):
                if status != "COMPLETED":
                    raise SystemExit(f"run {run_id} ended {status}")
                return time.perf_counter() - started


def record_history(home: Path, project: Path, runs: int) -> str:
    """A tenant `bench` with the project and `runs` recorded runs; a key to read it."""
    from bench.status_latency import record_runs

    from lakeguard.actors.keys import Scope
    from openlaketx.config import LakehouseConfig
    from openlaketx.service.tenants import Tenants

    laketx(home, "--tenant", "bench", "apply", str(project / "cells.yaml"))
    tenants = Tenants(LakehouseConfig.from_env(home=home))
    record_runs(tenants.get("bench").store, runs)
    return str(tenants.keys.create("bench", (Scope.RUNS_READ,))[1])


def read_load(
    url: str, token: str, clients: int, each: int, paths: tuple[str, ...]
) -> dict[str, float]:
    """`clients` threads, each sending `each` requests in turn over `paths` on one connection."""
    timings: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as http:
            for k in range(each):
                path = paths[(i + k) % len(paths)]
                started = time.perf_counter()
                try:
                    answer = http.get(path)
                    problem = None if answer.status_code == 200 else f"{answer.status_code}"
                except httpx.HTTPError as exc:
                    problem = type(exc).__name__
                elapsed = time.perf_counter() - started
                with lock:
                    if problem is None:
                        timings.append(elapsed)
                    else:
                        failures.append(f"{path}: {problem}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = time.perf_counter() - started
    if failures:
        log(f"{len(failures)} failed requests, e.g. {failures[0]}")
    timings.sort()
    return {
        "requests": len(timings),
        "failed": len(failures),
        "p50_ms": round(1000 * timings[len(timings) // 2], 1),
        "p99_ms": round(1000 * timings[max(0, int(len(timings) * 0.99) - 1)], 1),
        "throughput_rps": round(len(timings) / total, 1),
    }


def cold_start(work: Path, datasets: int, rounds: int = 3) -> dict[str, float]:
    """`laketx sql "SELECT 1"` on a store with `datasets` datasets vs a bare SparkSession
    (medians of `rounds` new processes each)."""
    home = work / "wide"
    lines = ["version: 1", "source_systems: [{id: s, options: {root: feed}}]", "source_objects:"]
    lines += [
        "  - {id: o, system: s, locator: '*.csv', dataset: d000, columns: [{name: x}]}",
        "datasets:",
        "  - {id: d000, layer: bronze}",
    ]
    lines += [
        f"  - {{id: d{i:03d}, layer: silver, parents: [d{i - 1:03d}]}}" for i in range(1, datasets)
    ]
    (work / "wide.yaml").write_text("\n".join(lines) + "\n")
    laketx(home, "apply", str(work / "wide.yaml"))
    bare = (
        "from openlaketx.config import LakehouseConfig\n"
        "from openlaketx.spark import get_or_create_session\n"
        f"s = get_or_create_session(LakehouseConfig.from_env(home={str(home)!r}))\n"
        "s.sql('SELECT 1').collect()\n"
    )
    laketx_s, bare_s = [], []
    for _ in range(rounds):
        laketx_s.append(laketx(home, "sql", "SELECT 1", "--json"))
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", bare], check=True, capture_output=True)
        bare_s.append(time.perf_counter() - started)
    return {
        "datasets": datasets,
        "laketx_sql_s": round(statistics.median(laketx_s), 2),
        "bare_session_s": round(statistics.median(bare_s), 2),
        "ratio": round(statistics.median(laketx_s) / statistics.median(bare_s), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of warm vs cold runs")
    parser.add_argument("--history", type=int, default=1000, help="runs recorded for reads")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="requests per client")
    parser.add_argument("--datasets", type=int, default=50, help="datasets of the cold start")
    parser.add_argument(
        "--cold-rounds", type=int, default=3, help="new processes of each kind: no-op, cold start"
    )
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="laketx-service-"))
    figures: dict[str, Any] = {}
    try:
        home, project, token = setup(work)
        deliver(project, "warmup_cli.csv")
        laketx(home, "run", "cells_job")  # resolves jars, first versions
        server = Server(home)
        try:
            deliver(project, "warmup_api.csv")
            trigger_to_terminal(server.url, token)  # the server's Spark starts here
            cold, warm = [], []
            for i in range(args.repeat):
                deliver(project, f"cli{i}.csv")
                cold.append(laketx(home, "run", "cells_job"))
                deliver(project, f"api{i}.csv")
                warm.append(trigger_to_terminal(server.url, token))
                log(f"round {i + 1}: cold CLI {cold[-1]:.2f}s, warm API {warm[-1]:.2f}s")
            figures["trigger_to_terminal"] = {
                "cold_cli_s": round(statistics.median(cold), 2),
                "warm_api_s": round(statistics.median(warm), 2),
                "ratio": round(statistics.median(warm) / statistics.median(cold), 3),
            }
            reader = record_history(home, project, args.history)
            load = (server.url, reader, args.clients, args.requests)
            read_load(*load, READS)  # first reads of each table: not what a client meets later
            figures["reads"] = {
                "history_runs": args.history,
                "clients": args.clients,
                **read_load(*load, READS),
                # the same clients on an endpoint that reads nothing: what this machine, h11
                # and FastAPI cost on their own
                "baseline_health": read_load(*load, ("/api/v1/health",)),
            }
        finally:
            server.stop()
        env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
        env["PATH"] = str(BIN)
        noop = [laketx(home, "run", "cells_job", env=env) for _ in range(args.cold_rounds)]
        figures["noop_run_without_java_s"] = round(statistics.median(noop), 2)
        figures["cold_start"] = cold_start(work, args.datasets, args.cold_rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name}: {value}")
    record("service_latency", figures, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
