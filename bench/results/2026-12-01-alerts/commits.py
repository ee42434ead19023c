"""Metadata commits of one warm governed run (bronze + silver) and the tables they go to:
the same before and after alerting. Run from a checkout, its `src` on PYTHONPATH:

    PYTHONPATH=$PWD/src .venv/bin/python bench/results/2026-12-01-alerts/commits.py $PWD
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1])  # the checkout, for tests.conftest

from tests.conftest import TEST_CONF, cells_yaml, write

from openlaketx.lakehouse import Lakehouse

work = Path(tempfile.mkdtemp())
home = work / "lh"
lh = Lakehouse.open(home=home, master="local[2]", spark_conf=TEST_CONF)
lh.apply(write(work / "p" / "cells.yaml", cells_yaml("_c")))
meta = home / "metadata" / "lakeguard"


def commits() -> dict[str, int]:
    return {
        t.name: len(list((t / "_delta_log").glob("*.json")))
        for t in meta.iterdir()
        if (t / "_delta_log").exists()
    }


def deliver(n: int, lat: float) -> None:
    incoming = work / "p" / "feed" / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    rows = f"GSM,{n},{lat},{n}\nLTE,{n + 100},10.0,{n}\n"
    (incoming / f"d{n}.csv").write_text("radio,cell,lat,updated\n" + rows)


deliver(1, 10.0)
lh.run("cells_job_c")  # warm
out = {}
for n, lat, what in [(2, 20.0, "promoted"), (3, 95.0, "blocked")]:
    deliver(n, lat)
    before = commits()
    started = time.perf_counter()
    result = lh.run("cells_job_c")
    took = time.perf_counter() - started
    after = commits()
    diff = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    out[what] = {
        "status": str(result.status),
        "commits": sum(diff.values()),
        "by_table": diff,
        "seconds": round(took, 2),
    }
print(json.dumps(out, indent=1, sort_keys=True))
