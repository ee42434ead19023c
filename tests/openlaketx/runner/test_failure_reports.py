"""What a failed run says: the job's error names every failing task (and what it skipped),
and `explain` on a dataset that has only ever failed says why instead of "run it first"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.words.errors import NotRegisteredError
from tests.support.project import write

pytestmark = pytest.mark.spark

DOC = """
source_systems:
  - {{id: two{s}, options: {{root: feed}}}}
source_objects:
  - id: east{s}
    system: two{s}
    locator: "east/*.csv"
    dataset: bronze_east{s}
    columns: [{{name: a, type: string}}]
  - id: west{s}
    system: two{s}
    locator: "west/*.csv"
    dataset: bronze_west{s}
    columns: [{{name: a, type: string}}]
datasets:
  - {{id: bronze_east{s}, layer: bronze}}
  - {{id: bronze_west{s}, layer: bronze}}
  - {{id: silver_east{s}, layer: silver, parents: [bronze_east{s}]}}
jobs:
  - id: both{s}
    tasks:
      - {{id: east, dataset: bronze_east{s}}}
      - {{id: west, dataset: bronze_west{s}}}
      - {{id: clean, dataset: silver_east{s}, depends_on: [east]}}
"""


def test_a_job_error_names_every_failing_task_and_explain_says_why(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_fr"
    lh.apply(write(tmp_path / "doc.yaml", DOC.format(s=s)))
    result = lh.run(f"both{s}")
    assert result.status == "FAILED"
    (run,) = [r for r in lh.runs(20) if r.pipeline_logging_id == result.run_id]
    said = run.error_message or ""
    assert f"bronze_east{s}: " in said and f"bronze_west{s}: " in said, said
    assert f"skipped: silver_east{s}" in said, said
    with pytest.raises(NotRegisteredError) as info:
        lh.explain(f"bronze_east{s}")
    assert "failed before the gate" in info.value.what and "no files match" in info.value.what
    assert "run it first" not in str(info.value)
