"""The first run after `laketx serve` starts, against the second: does a warm service pay the
JVM's start on its first run?

Each round starts a fresh `laketx serve` process (its own home, the small-delivery project of
bench/small_delivery.py applied, a key created), waits until its `/health` says Spark is
`ready` (or, with `--no-warm-spark`, only until it answers), then times two runs of the
two-dataset job through the API, each on a new delivery, from the POST to the terminal status.
With the warm-up (the default) the first run should cost what the second does; without it the
first pays the Spark start. Medians over `--rounds` servers.

By default the job has run once before the server starts (`laketx run`, one delivery): the
datasets' tables exist, as they do for any service that restarts. With `--fresh-home` the
first run through the API is the first delivery ever, so it also creates both tables and
registers them in the session: a cost of each new dataset, paid once, not of the start.

    .venv/bin/python bench/first_run.py                   # 3 rounds, 200 rows, warm Spark
    .venv/bin/python bench/first_run.py --no-warm-spark   # the baseline: Spark on demand
    .venv/bin/python bench/first_run.py --fresh-home      # the first run is the first delivery
    .venv/bin/python bench/first_run.py --rounds 1 --rows 20 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root

from bench.results import add_flags, record  # noqa: E402
from bench.service_latency import trigger_to_terminal  # noqa: E402
from bench.small_delivery import PROJECT, Deliveries  # noqa: E402

LAKETX = str(Path(sys.executable).with_name("laketx"))
READY_WITHIN = 900.0  # seconds: a cold JVM start on a busy 2-core machine


def log(message: str) -> None:
    print(f"[first-run] {message}", file=sys.stderr, flush=True)


def laketx(home: Path, *args: str) -> str:
    done = subprocess.run(
        [LAKETX, "--home", str(home), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"laketx {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def wait_ready(url: str, proc: subprocess.Popen[bytes], *, spark: bool) -> float:
    """Seconds until the server answers (and, with `spark`, until its Spark is ready)."""
    started = time.perf_counter()
    while time.perf_counter() - started < READY_WITHIN:
        if proc.poll() is not None:
            raise SystemExit(f"laketx serve exited with {proc.returncode}")
        try:
            health = httpx.get(f"{url}/api/v1/health", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            time.sleep(0.2)
            continue
        if health.get("spark") == "failed":
            raise SystemExit("the server's Spark warm-up failed")
        if not spark or health.get("spark") == "ready":
            return time.perf_counter() - started
        time.sleep(0.2)
    raise SystemExit(f"laketx serve was not ready within {READY_WITHIN:.0f} s")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_round(rows: int, warm: bool, fresh_home: bool = False) -> dict[str, float]:
    """A fresh server: its start-up, then the first and the second run through the API (after
    one run by the CLI, unless `fresh_home`)."""
    work = Path(tempfile.mkdtemp(prefix="laketx-first-"))
    home = work / "home"
    try:
        (work / "project.yaml").write_text(PROJECT)
        laketx(home, "apply", str(work / "project.yaml"))
        made = laketx(
            home, "keys", "create", "--tenant", "default", "--scopes",
            "runs:trigger,runs:read", "--json",
        )  # fmt: skip
        token = json.loads(made)["token"]
        deliveries = Deliveries(work, rows)
        if not fresh_home:  # the tables exist, as for a service that restarts
            deliveries.next()
            done = subprocess.run(
                [LAKETX, "--home", str(home), "run", "orders_job"],
                cwd=work,  # the landing folder is relative to the document's folder
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"laketx run orders_job failed: {done.stderr[-2000:]}")
        port = free_port()
        flag = "--warm-spark" if warm else "--no-warm-spark"
        command = [LAKETX, "--home", str(home), "serve", "--port", str(port), flag]
        proc = subprocess.Popen(
            command,
            cwd=work,  # the project's landing folder is relative to the document's folder
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            startup = wait_ready(url, proc, spark=warm)
            deliveries.next()
            first = trigger_to_terminal(url, token, "orders_job")
            deliveries.next()
            second = trigger_to_terminal(url, token, "orders_job")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=300)
        return {"startup": startup, "first": first, "second": second}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-spark", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--fresh-home",
        action="store_true",
        help="no run before the server starts: its first run is the first delivery",
    )
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)

    rounds = []
    for n in range(args.rounds):
        log(f"round {n + 1} of {args.rounds}: a fresh laketx serve, warm Spark {args.warm_spark}")
        rounds.append(one_round(args.rows, args.warm_spark, args.fresh_home))
    median = {k: statistics.median(r[k] for r in rounds) for k in ("startup", "first", "second")}
    results = {
        "rows": args.rows,
        "rounds": args.rounds,
        "warm_spark": args.warm_spark,
        "fresh_home": args.fresh_home,
        "ratio": median["first"] / median["second"],
        "median_s": median,
        "seconds": rounds,
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"first run after laketx serve starts vs the second ({args.rows} rows), medians:")
        print(f"  start-up until ready  {median['startup']:6.2f} s")
        print(f"  first run             {median['first']:6.2f} s")
        print(f"  second run            {median['second']:6.2f} s")
        print(f"  first / second        {results['ratio']:.2f}x")
    record("first_run", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
