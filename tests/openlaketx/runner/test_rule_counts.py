"""Per-rule failure counts and samples on dirty data are exact, even when Spark retries a task
that had already written part of a staged file (a child process whose SparkSession allows
retries: `local[2,3]`)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[3]
CATEGORIES = ["books", "games", "toys"]
EMAIL = r"^[a-z0-9.]+@[a-z]+\.org$"

DOCUMENT = f"""
version: 1
source_systems:
  - {{id: feed, options: {{root: landing}}}}
source_objects:
  - id: events_csv
    system: feed
    locator: "*.csv"
    options: {{header: "true"}}
    dataset: events
    columns:
      - {{name: id, type: bigint}}
      - {{name: amount, type: double}}
      - {{name: cat, type: string}}
      - {{name: email, type: string}}
datasets:
  - {{id: events, layer: bronze}}
rules:
  - {{id: amount_set, dataset: events, type: NOT_NULL, columns: [amount], severity: WARN}}
  - {{id: amount_range, dataset: events, type: RANGE, column: amount, min: 0, max: 100, severity: WARN}}
  - {{id: cat_known, dataset: events, type: ALLOWED_VALUES, column: cat, values: {CATEGORIES}, severity: WARN}}
  - {{id: email_format, dataset: events, type: REGEX, column: email, pattern: '{EMAIL}', severity: WARN}}
  - {{id: amount_whole, dataset: events, type: EXPRESSION, expression: "amount >= 1", severity: WARN}}
  - {{id: id_unique, dataset: events, type: UNIQUE, columns: [id], severity: WARN}}
"""

# The child runs the dataset with a filter whose first attempt of one task fails after some
# rows were written, so that task's file is written twice; only the retry's is committed.
CHILD = """
import json, sys
from pathlib import Path
from pyspark import TaskContext
from pyspark.sql import functions as F
import openlaketx.runner.stage as stage
from openlaketx.lakehouse import Lakehouse
from tests.support.environment import TEST_CONF

home, document, marker = sys.argv[1:4]
publishable = stage.publishable

def fail_first_attempt(_id):
    ctx = TaskContext.get()
    if ctx.partitionId() == 0 and ctx.attemptNumber() == 0 and _id % 1000 == 999:
        Path(marker).write_text(str(_id))
        raise RuntimeError("forced task failure")
    return True

def flaky(frame, *args, **kwargs):
    frame = frame.where(F.udf(fail_first_attempt, "boolean")(F.col("id")))
    return publishable(frame, *args, **kwargs)

stage.publishable = flaky
conf = {**TEST_CONF, "spark.sql.files.maxPartitionBytes": "64k"}
lh = Lakehouse.open(home=home, master="local[2,3]", spark_conf=conf)
lh.apply(document)
run = lh.run("events")
step = run.steps[0] if run.steps else None
done = step is not None and step.status == "SUCCESS"
print(json.dumps(default=str, obj={
    "status": step.status if step else run.status,
    "error": (step.error if step else None) or run.error,
    "outcomes": {o.rule_id: [o.failed_rows, list(o.samples)] for o in step.outcomes} if step else {},
    "rows": lh.read("events").count() if done else None,
    "columns": lh.read("events").columns if done else None,
}))
"""


def dirty_rows(seed: int, count: int) -> list[tuple[int, str, str, str]]:
    """(id, amount, cat, email) as CSV text: every rule but UNIQUE fails on some rows."""
    rnd = random.Random(seed)
    rows = []
    for i in range(count):
        amount = "" if rnd.random() < 0.03 else str(rnd.choice([rnd.randint(1, 100), 0.5, 150]))
        cat = rnd.choice([*CATEGORIES, "misc", "TOYS"]) if rnd.random() < 0.3 else "books"
        email = f"u{i}@x.org" if rnd.random() > 0.05 else rnd.choice([f"U{i}@x.org", f"u{i} at x"])
        key = i if rnd.random() > 0.01 else i - 1  # a few ids twice
        rows.append((key, amount, cat, email))
    return rows


def expected(rows: list[tuple[int, str, str, str]]) -> dict[str, tuple[int, list[str]]]:
    """Each rule's failures and (for the string rules) its two samples, counted in Python."""
    amounts = [float(a) if a else None for _, a, _, _ in rows]
    bad_cats = [c for _, _, c, _ in rows if c not in CATEGORIES]
    bad_emails = [e for _, _, _, e in rows if not re.match(EMAIL, e)]
    ids = [k for k, _, _, _ in rows]
    return {
        "amount_set": (sum(a is None for a in amounts), []),
        "amount_range": (sum(a is not None and not 0 <= a <= 100 for a in amounts), []),
        "cat_known": (len(bad_cats), [min(bad_cats), max(bad_cats)]),
        "email_format": (len(bad_emails), [min(bad_emails), max(bad_emails)]),
        "amount_whole": (sum(a is None or a < 1 for a in amounts), []),
        "id_unique": (sum(ids.count(k) for k in set(ids) if ids.count(k) > 1), []),
    }


def test_rule_counts_are_exact_on_dirty_data_with_a_task_retried(tmp_path: Path) -> None:
    home = tmp_path / "home"
    landing = tmp_path / "landing"  # the root, relative to the document
    landing.mkdir(parents=True)
    rows = []
    for n in range(3):
        part = dirty_rows(n, 4000)
        part = [(k + n * 4000, a, c, e) for k, a, c, e in part]
        rows += part
        text = "\n".join(f"{k},{a},{c},{e}" for k, a, c, e in part)
        (landing / f"part{n}.csv").write_text(f"id,amount,cat,email\n{text}\n")
    document = tmp_path / "doc.yaml"
    document.write_text(DOCUMENT)
    marker = tmp_path / "failed_once"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), str(document), str(marker)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    found = json.loads(child.stdout.strip().splitlines()[-1])
    assert marker.exists(), f"no task was retried: {found}"
    assert found["status"] == "SUCCESS", found["error"]
    assert found["rows"] == len(rows)
    assert not [c for c in found["columns"] if c.startswith("_laketx_rule_")]
    for rule_id, (failed, samples) in expected(rows).items():
        got_failed, got_samples = found["outcomes"][rule_id]
        assert got_failed == failed, rule_id
        assert failed > 0, f"the data should break {rule_id}"
        if samples:
            assert got_samples == samples, rule_id
