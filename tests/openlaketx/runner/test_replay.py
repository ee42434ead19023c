"""`laketx replay`: every version records a content hash; a version rebuilt from its parents'
recorded snapshots and the definitions in force then matches it, and a change made behind the
gate is reported as a mismatch."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from openlaketx.cli import app
from tests.support.project import Project, assert_sound

GOLD = """  - id: gold_radios{s}
    layer: gold
    table: gold.radios{s}
    parents: [silver_cells{s}]
    sql: "SELECT radio, count(*) AS cells, round(avg(lat), 3) AS lat FROM silver_cells{s} GROUP BY radio"
rules:"""


def hashes(lh: Any, dataset: str) -> list[tuple[int, str | None, str | None]]:
    return [
        (v.version, v.content_hash, v.definition_hash) for v in lh.reader.versions.versions(dataset)
    ]


@pytest.mark.spark
def test_untouched_history_replays_and_a_change_behind_the_gate_does_not(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    gold = f"gold_radios{p.suffix}"
    p.yaml.write_text(
        p.yaml.read_text()
        .replace("rules:", GOLD.format(s=p.suffix), 1)
        .replace(
            "      - {id: clean,",
            f"      - {{id: gold, dataset: {gold}, depends_on: [clean]}}\n      - {{id: clean,",
        )
    )
    lh.apply(p.yaml)
    p.add("d1.csv", ["GSM,1,10.5,100", "LTE,2,20.0,100", "GSM,3,30.0,100"])
    assert lh.run(p.job).status == "COMPLETED"
    p.add("d2.csv", ["GSM,1,11.5,200", "LTE,4,40.0,200"])  # cell 1 changes, cell 4 is new
    assert lh.run(p.job).status == "COMPLETED"
    for dataset in (p.bronze, p.silver, gold):
        recorded = hashes(lh, dataset)
        assert [v for v, _, _ in recorded] == [1, 2]
        assert all(c and d for _, c, d in recorded), recorded  # every version carries both
    assert hashes(lh, p.bronze)[0][1] == "3:" + hashes(lh, p.bronze)[0][1].split(":")[1]

    reports = {(d, v): lh.replay(d, v) for d in (p.bronze, p.silver, gold) for v in (1, 2)}
    for (dataset, version), report in reports.items():
        assert report.matches, (dataset, version, report)
        assert report.comparisons[0].name == "stored"
    rebuilt = {c.name: c for c in reports[p.silver, 2].comparisons}["rebuilt"]
    assert rebuilt.matches is True and f"{p.bronze} v2" in rebuilt.detail
    bronze = {c.name: c for c in reports[p.bronze, 1].comparisons}
    assert bronze["rebuilt"].matches is None and bronze["current"].matches is True

    # New definitions do not change what an old version was made with.
    p.yaml.write_text(
        p.yaml.read_text().replace('filter: "cell IS NOT NULL"', 'filter: "cell > 3"')
    )
    lh.apply(p.yaml)
    report = lh.replay(p.silver, 2)
    assert report.matches and any("changed since" in n for n in report.notes)
    assert_sound(lh, p.bronze, p.silver, gold)

    # A change made behind the gate: rows of bronze version 1 and of silver's latest version.
    lh.sql(f"UPDATE delta.`{lh.warehouse}/bronze/cells{p.suffix}` SET lat = 0 WHERE cell = 3")
    lh.sql(f"UPDATE delta.`{lh.warehouse}/silver/cells{p.suffix}` SET lat = -1 WHERE cell = 4")
    tampered = lh.replay(p.bronze, 1)
    assert not tampered.matches
    found = {c.name: c.matches for c in tampered.comparisons}
    assert found == {"stored": True, "current": False, "rebuilt": None}
    assert lh.replay(p.bronze, 2).matches  # version 2's rows were not touched
    silver = {c.name: c.matches for c in lh.replay(p.silver, 2).comparisons}
    assert silver == {"stored": True, "current": False, "rebuilt": True}

    shown = CliRunner().invoke(
        app, ["--home", str(lh.config.home), "replay", p.bronze, "--version", "1", "--json"]
    )
    assert shown.exit_code == 10, shown.output
    body = json.loads(shown.output[shown.output.index("{") :])
    assert body["matches"] is False and body["dataset_id"] == p.bronze
    missing = CliRunner().invoke(
        app, ["--home", str(lh.config.home), "replay", p.bronze, "--version", "9"]
    )
    assert missing.exit_code != 0 and "no approved version 9" in missing.output
