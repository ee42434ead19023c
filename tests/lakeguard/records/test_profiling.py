"""Profiling at a cadence: when the full profile is due and how far a profile drifted are pure;
a real run records the metrics and a PROFILE policy blocks a drifted batch."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeguard.records.quality.profiling import (
    LastProfiles,
    ProfileCadence,
    full_profile_due,
    profile_drift,
)
from lakeguard.rules.catalog.loader import load_file
from lakeguard.words.errors import ValidationError
from tests.support.project import Project, assert_sound, cells_yaml, write

NOW = datetime(2026, 11, 26, 12, 0)


def test_cadence_every_nth_batch_or_at_cron_times() -> None:
    never = LastProfiles({})
    assert not full_profile_due(None, never, NOW)  # footer profile only
    assert full_profile_due(ProfileCadence(every=3), never, NOW)  # nothing yet: profile now
    ran = LastProfiles({}, full_at=NOW - timedelta(hours=1), batches_since_full=1)
    assert not full_profile_due(ProfileCadence(every=3), ran, NOW)  # this is the 2nd since
    ran2 = LastProfiles({}, full_at=NOW - timedelta(hours=1), batches_since_full=2)
    assert full_profile_due(ProfileCadence(every=3), ran2, NOW)  # the 3rd
    assert full_profile_due(ProfileCadence(every=1), ran, NOW)
    daily = ProfileCadence(cron="0 6 * * *")
    assert not full_profile_due(daily, LastProfiles({}, full_at=NOW - timedelta(hours=5)), NOW)
    assert full_profile_due(daily, LastProfiles({}, full_at=NOW - timedelta(hours=7)), NOW)


def test_profile_drift_measures_nulls_means_and_distincts() -> None:
    before = {
        ("lat", "null_ratio"): "0.0",
        ("lat", "mean"): "10.0",
        ("lat", "stddev"): "2.0",
        ("lat", "approx_distinct"): "100",
        ("radio", "null_ratio"): "0.1",
        ("*", "row_count"): "100",
    }
    after = {
        ("lat", "null_ratio"): "0.25",
        ("lat", "mean"): "16.0",
        ("lat", "approx_distinct"): "150",
        ("radio", "null_ratio"): "0.05",
        ("*", "row_count"): "100",
    }
    drift = profile_drift(before, after)
    assert drift == {
        "null_ratio_increase": 0.25,
        "mean_shift": 3.0,
        "distinct_change": 0.5,
        "compared": 1.0,
        "full_compared": 1.0,
    }
    footer_only = {k: v for k, v in after.items() if k[1] == "null_ratio"}
    assert profile_drift(before, footer_only)["full_compared"] == 0.0
    assert profile_drift({}, after)["compared"] == 0.0
    same_zero_spread = {("x", "mean"): "1", ("x", "stddev"): "0"}
    assert profile_drift(same_zero_spread, {("x", "mean"): "1"})["mean_shift"] == 0.0
    # a constant column has no scale to measure a move by: it never blocks for good
    assert profile_drift(same_zero_spread, {("x", "mean"): "2"})["mean_shift"] == 0.0


def test_a_profile_cadence_is_validated_with_its_location(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "    table: silver.cells\n",
        "    table: silver.cells\n    profile: {every: 2, cron: '0 6 * * *'}\n",
    )
    text = text.replace(
        "    table: bronze.cells\n", "    table: bronze.cells\n    profile: {cron: 'at dawn'}\n"
    )
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "m.yaml", text))
    shown = str(info.value)
    assert "datasets[0].profile" in shown and "at dawn" in shown
    assert "datasets[1].profile" in shown and "either every or cron" in shown


def profile_of(lh: Any, dataset: str, run_id: str) -> dict[tuple[str, str], str | None]:
    rows = lh.sql(
        "SELECT column_name, metric, value FROM lakeguard.data_profiling_results "
        f"WHERE dataset_id = '{dataset}' AND run_id = '{run_id}'"
    ).collect()
    return {(r["column_name"], r["metric"]): r["value"] for r in rows}


@pytest.mark.spark
def test_full_profile_every_second_batch_and_a_profile_policy(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    p.yaml.write_text(
        p.yaml.read_text()
        .replace(
            f"    table: bronze.cells{p.suffix}\n",
            f"    table: bronze.cells{p.suffix}\n    profile: {{every: 2, top_values: 2}}\n",
        )
        .replace(
            "jobs:",
            f"policies:\n  - {{id: steady{p.suffix}, type: PROFILE, applies_to: [bronze], "
            'expression: "full_compared = 0 OR mean_shift <= 3"}\njobs:',
        )
    )
    lh.apply(p.yaml)
    p.add("d1.csv", ["GSM,1,10.0,1", "GSM,2,11.0,1", "LTE,3,12.0,1", "GSM,4,,1"])
    first = lh.run(p.bronze).steps[0]
    assert first.status == "SUCCESS"
    full = profile_of(lh, p.bronze, first.run_id)
    assert full[("lat", "null_ratio")] == "0.25" and full[("lat", "null_count")] == "1"
    assert float(full[("lat", "mean")] or 0) == pytest.approx(11.0)
    assert float(full[("lat", "stddev")] or 0) == pytest.approx(1.0)
    assert full[("cell", "approx_distinct")] == "4"
    assert json.loads(full[("radio", "top_values")] or "") == [["GSM", 3], ["LTE", 1]]

    p.add("d2.csv", ["GSM,5,13.0,1", "LTE,6,9.0,1"])
    second = lh.run(p.bronze).steps[0]
    footer = profile_of(lh, p.bronze, second.run_id)
    assert ("lat", "mean") not in footer and footer[("lat", "min")] == "9.0"  # not due yet

    p.add("d3.csv", ["GSM,7,90.0,1", "LTE,8,91.0,1"])  # the mean jumps far beyond 3 deviations
    third = lh.run(p.bronze).steps[0]
    assert third.status == "BLOCKED" and f"policy:steady{p.suffix}" in (third.reason or "")
    decision = lh.explain(p.bronze)
    assert "mean_shift=" in decision.evidence.check(f"policy:steady{p.suffix}").detail  # type: ignore[union-attr]
    assert_sound(lh, p.bronze)
