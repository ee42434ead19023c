"""`verify`: every invariant audited; a violation planted in each one is found (pure part),
and on real stores (Spark part)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.records.audit import AuditData, Violation, audit
from lakeguard.records.commits import Commit, Tag, parse_tag
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
from lakeguard.records.sources.kinds.file import SeenFile
from lakeguard.records.sources.progress_rows import RejectedFileRow, SourceProgressRow
from lakeguard.words.vocabulary import AttemptStatus, EventStatus, FileAction, JobStatus
from openlaketx.cli import app
from tests.support.project import Project

NOW = datetime(2026, 11, 26, 12, 0)
TAG = Tag(run_id="r1", data_version=1)


EVENT = RunEventRow(
    run_id="r1",
    pipeline_logging_id="j1",
    pipeline_id="job",
    tenant_id="t",
    dataset_id="d",
    status=EventStatus.RUNNING,
    event_time=NOW,
)
ATTEMPT = RunHistoryRow(
    run_id="r1",
    pipeline_logging_id="j1",
    tenant_id="t",
    dataset_id="d",
    layer="bronze",
    status=AttemptStatus.SUCCESS,
    start_time=NOW,
    end_time=NOW,
    triggered_by="cli",
)
JOB_RUN = PipelineRunRow(
    pipeline_logging_id="j1",
    pipeline_id="job",
    tenant_id="t",
    status=JobStatus.COMPLETED,
    trigger_type="manual",
    trigger_by="cli",
    start_time=NOW,
    end_time=NOW,
)


def version(number: int) -> DataVersionRow:
    return DataVersionRow(
        tenant_id="t",
        dataset_id="d",
        version=number,
        snapshot_ref="0",
        schema_hash="h",
        row_count=1,
        run_id="r1",
        promoted_at=NOW,
        promoted_by="job",
    )


def decision(allowed: bool = True, evidence: str | None = "{}x") -> DecisionRow:
    return DecisionRow(
        tenant_id="t",
        dataset_id="d",
        run_id="r1",
        from_layer="source",
        to_layer="bronze",
        allowed=allowed,
        reason="r",
        evaluated_at=NOW,
        evidence=evidence,
    )


def sound() -> dict[str, Any]:
    """A store with one job run, one attempt that promoted version 1, and its commit."""
    return {
        "events": [EVENT, replace(EVENT, run_id="j1", dataset_id=None)],
        "attempts": [ATTEMPT],
        "job_runs": [JOB_RUN],
        "versions": [version(1)],
        "decisions": [decision()],
        "datasets": {"d": "bronze.d"},
        "commits": {"d": [Commit(0, "WRITE", TAG, {"mode": "Append"})]},
        "append_only": {
            "run_history": (
                [Commit(0, "CREATE TABLE", None), Commit(1, "WRITE", None, {"mode": "Append"})],
                {"delta.appendOnly": "true"},
            )
        },
        "now": NOW,
    }


def checks(**changes: Any) -> list[str]:
    data = {**sound(), **changes}
    return [v.check for v in audit(AuditData(**data), lambda worker: worker == "dead:1")]


def test_a_sound_store_has_no_violation() -> None:
    assert checks() == []
    maintained = [
        Commit(0, "WRITE", TAG),
        Commit(1, "OPTIMIZE", None),
        Commit(2, "ADD COLUMNS", None),
    ]
    assert checks(commits={"d": maintained}) == []


def test_invariant_4_terminal_rows() -> None:
    twice = [ATTEMPT] * 2
    assert checks(attempts=twice) == ["one_terminal_row"]
    left = replace(EVENT, run_id="r2")
    alive = [*sound()["events"], replace(left, worker_instance="live:2")]
    assert checks(events=alive) == []  # in flight, not a violation
    dead = [*sound()["events"], replace(left, worker_instance="dead:1")]
    assert checks(events=dead) == ["left_running"]
    stale = [*sound()["events"], replace(left, event_time=NOW - timedelta(days=2))]
    assert checks(events=stale) == ["left_running"]


def test_invariants_3_and_5_versions_and_decisions() -> None:
    gap = [*sound()["versions"], version(3)]
    assert "versions_increasing" in checks(versions=gap)
    assert checks(decisions=[]) == ["version_has_decision"]
    blocked = [decision(allowed=False, evidence="x")]
    assert checks(decisions=blocked) == ["version_has_decision"]
    bare = [decision(evidence=None)]
    assert checks(decisions=bare) == ["decision_has_evidence"]
    assert checks(datasets={}) == ["registered"]


def test_invariants_7_and_8_commits() -> None:
    assert checks(commits={"d": []}) == ["version_has_commit"]
    assert checks(commits={"d": [Commit(0, "WRITE", None)]}) == ["version_has_commit"]
    other = Tag(run_id="r9", data_version=1)
    assert checks(commits={"d": [Commit(0, "WRITE", other)]}) == ["commit_matches_version"]
    orphan = [Commit(0, "WRITE", TAG), Commit(1, "WRITE", Tag(run_id="r2", data_version=2))]
    assert checks(commits={"d": orphan}) == ["orphan_commit"]
    around = [Commit(0, "WRITE", TAG), Commit(1, "DELETE", None)]
    assert checks(commits={"d": around}) == ["commit_around_the_gate"]


def test_invariant_3_append_only_tables() -> None:
    commits, _ = sound()["append_only"]["run_history"]
    rewritten = {
        "run_history": ([*commits, Commit(2, "DELETE", None)], {"delta.appendOnly": "true"})
    }
    assert checks(append_only=rewritten) == ["append_only_rewritten"]
    overwrite = [*commits, Commit(2, "WRITE", None, {"mode": "Overwrite"})]
    assert checks(append_only={"run_history": (overwrite, {"delta.appendOnly": "true"})}) == [
        "append_only_rewritten"
    ]
    unset = {"run_history": (commits, {"delta.appendOnly": "false"})}
    assert checks(append_only=unset) == ["append_only_property"]
    # a store migration's rewrite (`laketx migrate`, its commit marked) is not a violation
    migrated = [*commits, Commit(2, "WRITE", None, {"mode": "Overwrite"}, migration="2 m")]
    assert checks(append_only={"run_history": (migrated, {"delta.appendOnly": "true"})}) == []


def test_invariants_1_and_9_rejected_files() -> None:
    """A file still rejected belongs to a registered dataset, and no approved batch took it as
    it was rejected; one that changed since, or was released, was rightly read again."""
    bad = SeenFile(path="file:/in/b.csv", size=7, modification_time=NOW)
    rejected = RejectedFileRow.rejected(
        bad,
        "is not UTF-8 text",
        tenant_id="t",
        dataset_id="d",
        source_object_id="o",
        run_id="r0",
        recorded_at=NOW,
    )

    def taken(mark: SeenFile) -> dict[str, list[SourceProgressRow]]:
        row = SourceProgressRow.of(
            mark,
            tenant_id="t",
            dataset_id="d",
            source_object_id="o",
            run_id="r1",
            data_version=1,
            recorded_at=NOW,
        )
        return {"d": [row]}

    assert checks(rejected=[rejected]) == []
    assert checks(rejected=[rejected], datasets={}) == ["registered", "registered"]
    assert checks(rejected=[rejected], taken=taken(bad)) == ["rejected_or_taken"]
    changed = bad.model_copy(update={"size": 9})  # fixed, then read and approved
    assert checks(rejected=[rejected], taken=taken(changed)) == []
    released = rejected.release("ops", NOW + timedelta(minutes=1))
    assert checks(rejected=[rejected, released], taken=taken(bad)) == []
    assert released.action == FileAction.RELEASED


def found(lh: Any, *datasets: str) -> list[Violation]:
    return lh.verify(set(datasets)) if datasets else lh.verify()


@pytest.mark.spark
def test_verify_finds_what_was_planted_in_a_real_store(
    lakehouse: Any, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, p = lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,20.5,100"])
    assert lh.run(p.job).status == "COMPLETED"
    home = str(lh.config.home)
    runner = CliRunner()
    clean = runner.invoke(app, ["--home", home, "verify", "--json"])
    assert clean.exit_code == 0 and json.loads(clean.stdout) == {"ok": True, "violations": []}

    # a commit around the gate
    lh.sql(
        f"INSERT INTO bronze.cells{p.suffix} (radio, cell, lat, updated, _laketx_version, "
        "_laketx_run_id, _laketx_loaded_at) VALUES ('GSM', 9, 1.0, 1, 9, 'x', now())"
    )
    (around,) = found(lh, p.bronze)
    assert around.check == "commit_around_the_gate" and around.invariant == 8
    assert "RESTORE TABLE" in around.fix
    broken = runner.invoke(app, ["--home", home, "verify", "--json"])
    assert broken.exit_code == 10
    assert json.loads(broken.stdout)["violations"][0]["check"] == "commit_around_the_gate"

    # an orphan: published, then the run died before the version was recorded
    def crash(*_: Any, **__: Any) -> None:
        raise RuntimeError("killed before recording")

    monkeypatch.setattr(lh.gate.__class__, "record_version", crash)
    p.add("d2.csv", ["GSM,3,5.0,200"])
    lh.run(p.silver)  # nothing new for silver; bronze is the one that crashes
    assert lh.run(p.bronze).status == "FAILED"
    assert "orphan_commit" in [v.check for v in found(lh, p.bronze)]
    monkeypatch.undo()
    assert lh.run(p.bronze).status == "COMPLETED"  # adopts it
    assert [v.check for v in found(lh, p.bronze)] == ["commit_around_the_gate"]

    # an append-only metadata table rewritten behind the store's back
    from deltalake import DeltaTable

    table = DeltaTable(lh.store.location("step_logs"))
    table.alter.set_table_properties({"delta.appendOnly": "false"})
    DeltaTable(lh.store.location("step_logs")).delete("step_type = 'gate'")
    rewritten = {v.check for v in found(lh)}
    assert {"append_only_property", "append_only_rewritten"} <= rewritten


def test_a_commit_tag_is_read_into_its_record_and_a_hand_edited_one_does_not_crash() -> None:
    written = '{"laketx": {"batch": "b", "data_version": 3, "dataset_id": "d", "rows": 5, "run_id": "r", "upstream": {"p": 2}}}'
    assert parse_tag(written) == Tag(
        run_id="r", dataset_id="d", data_version=3, batch="b", upstream={"p": 2}, rows=5
    )
    released = parse_tag('{"laketx": {"dataset_id": "d", "release": 3, "run_id": "r"}}')
    assert released is not None and released.release == 3 and released.data_version is None
    for untagged in (None, "", "not json", "null", "[1]", '{"laketx": [1]}', '{"other": {}}'):
        assert parse_tag(untagged) is None, untagged
    edited = parse_tag('{"laketx": {"run_id": 7, "data_version": "x", "upstream": {"p": "y"}}}')
    assert edited == Tag(run_id="7")
    # such a commit does not match its version: verify reports it instead of failing
    assert checks(commits={"d": [Commit(0, "WRITE", edited)]}) == ["commit_matches_version"]
