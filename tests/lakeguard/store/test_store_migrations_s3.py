"""Store migrations on a real S3-compatible object store (SeaweedFS, started by the suite): the
store of tests/fixtures/store_v0, uploaded to the bucket, is refused, `laketx migrate` rewrites
pipeline_runs there keeping every row, and a migrate interrupted at each step of the rewrite
(in-process, and by killing a real child process) is finished by the next one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.records.versioning import StoreVersionError
from lakeguard.store import MetadataStore
from lakeguard.store.migrations import migrate
from openlaketx.cli import app
from tests.support.store_v0 import (
    STEPS,
    assert_migrated,
    every_row,
    fixture_rows,
    interrupted_then_refused,
    kill_during_migrate,
    upload,
)

runner = CliRunner()


@pytest.fixture
def on_s3(s3_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> MetadataStore:
    """The old store uploaded to a fresh prefix, the settings pointing at it (children inherit
    them), and the home a local folder."""
    prefix: str = s3_server.point_at(monkeypatch)
    root = upload(s3_server, prefix)
    monkeypatch.setenv("LAKETX_METADATA_HOME", prefix)
    monkeypatch.setenv("LAKETX_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return MetadataStore("lakeguard", root, "default")


def test_migrate_on_the_object_store_keeps_every_row(
    s3_server: Any, on_s3: MetadataStore, tmp_path: Path
) -> None:
    before = every_row(on_s3)
    assert len(before["pipeline_runs"]) == 5
    assert before == fixture_rows()  # the upload is the fixture's store, row for row
    refused = runner.invoke(app, ["--home", str(tmp_path / "home"), "status"])
    assert refused.exit_code == StoreVersionError.exit_code
    assert "laketx migrate" in refused.output
    migrated = runner.invoke(app, ["--home", str(tmp_path / "home"), "migrate", "--json"])
    assert migrated.exit_code == 0, migrated.output
    lines = json.loads(migrated.stdout)["migrated"]["default"]
    assert any("renamed triggered_by to trigger_by (5 rows kept)" in line for line in lines)
    status = runner.invoke(app, ["--home", str(tmp_path / "home"), "status", "--json"])
    assert status.exit_code == 0, status.output
    assert_migrated(on_s3, before)
    # nothing was built or set aside beside the table: the switch is the table's own log
    root = on_s3.root.removeprefix("s3://")
    tables = {k.removeprefix(root + "/").split("/")[0] for k in s3_server.keys_under(on_s3.root)}
    assert tables <= set(on_s3.tables()), tables - set(on_s3.tables())


@pytest.mark.parametrize("point", STEPS)
def test_a_migrate_interrupted_at_each_step_on_the_object_store_is_finished_by_the_next(
    on_s3: MetadataStore, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = fixture_rows()
    interrupted_then_refused(on_s3, point, monkeypatch)
    migrate(on_s3)
    assert_migrated(on_s3, before)


@pytest.mark.parametrize("point", STEPS)
def test_a_killed_migrate_on_the_object_store_is_finished_by_the_next(
    on_s3: MetadataStore, point: str, tmp_path: Path
) -> None:
    before = fixture_rows()
    kill_during_migrate(tmp_path / "home", point)
    refused = runner.invoke(app, ["--home", str(tmp_path / "home"), "status"])
    assert refused.exit_code == StoreVersionError.exit_code
    assert ("interrupted" if point != "after_end" else "laketx migrate") in refused.output
    again = runner.invoke(app, ["--home", str(tmp_path / "home"), "migrate"])
    assert again.exit_code == 0, again.output
    assert_migrated(on_s3, before)
