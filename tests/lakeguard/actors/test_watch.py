"""The folder watcher (seed 004's metadata monitor), without Spark: valid documents applied
once, invalid ones refused whole, every sync recorded, removals deactivating only when asked,
and several watchers on one folder applying each version once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeguard.actors.catalog.watch import FolderWatcher
from lakeguard.records.definitions.sets import DOCUMENT_TABLES
from lakeguard.store import MetadataStore
from lakeguard.words.vocabulary import SyncOutcome
from tests.support.project import cells_yaml, write

BIN = Path(sys.executable).parent


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MetadataStore]:
    s = MetadataStore("lakeguard", str(tmp_path / "home" / "metadata" / "lakeguard"), "default")
    s.ensure()
    yield s


def active(store: MetadataStore, table: str) -> set[str]:
    return {str(r.key()[0]) for r in store.definitions(DOCUMENT_TABLES[table])}


def outcomes(store: MetadataStore) -> list[tuple[str, str]]:
    rows = sorted(store.rows("metadata_syncs"), key=lambda r: r["synced_at"])
    return [(r["file"], r["outcome"]) for r in rows]


def test_documents_are_applied_once_and_invalid_ones_are_refused_whole(
    store: MetadataStore, tmp_path: Path
) -> None:
    folder = tmp_path / "metadata"
    write(folder / "cells.yaml", cells_yaml("_a"))
    watcher = FolderWatcher(store, folder, "/warehouse")
    (first,) = watcher.sync()
    assert first.outcome == SyncOutcome.APPLIED and first.file == "cells.yaml"
    assert active(store, "dataset_registry") == {"bronze_cells_a", "silver_cells_a"}
    assert {"table": "jobs", "key": ["cells_job_a"], "action": "create"} in first.changes
    assert watcher.sync() == []  # the same version again: nothing to do, nothing recorded

    # an invalid document next to it: refused with its errors, nothing of it applied
    broken = cells_yaml("_b").replace("type: RANGE", "type: NOT_A_RULE")
    write(folder / "team_b" / "cells.yml", broken)
    (refused,) = watcher.sync()
    assert refused.outcome == SyncOutcome.REFUSED and refused.file == "team_b/cells.yml"
    assert any("rules[0]" in e["path"] for e in refused.errors)
    assert active(store, "dataset_registry") == {"bronze_cells_a", "silver_cells_a"}
    assert watcher.sync() == []  # refused once, not on every pass

    # corrected: applied; an edit of the first file: only what changed
    write(folder / "team_b" / "cells.yml", cells_yaml("_b"))
    write(folder / "cells.yaml", cells_yaml("_a").replace("severity: WARN", "severity: FAIL"))
    results = {r.file: r for r in watcher.sync()}
    assert results["team_b/cells.yml"].outcome == SyncOutcome.APPLIED
    assert results["cells.yaml"].changes == [
        {"table": "quality_rules", "key": ["radio_known_a"], "action": "update"}
    ]
    assert Counter(outcomes(store)) == Counter(
        {
            ("cells.yaml", "APPLYING"): 2,
            ("cells.yaml", "APPLIED"): 2,
            ("team_b/cells.yml", "REFUSED"): 1,
            ("team_b/cells.yml", "APPLYING"): 1,
            ("team_b/cells.yml", "APPLIED"): 1,
        }
    )
    recorded = [r for r in store.rows("metadata_syncs") if r["outcome"] == "REFUSED"]
    assert json.loads(recorded[0]["errors"]) == refused.errors


def test_a_removed_document_deactivates_only_when_asked(
    store: MetadataStore, tmp_path: Path
) -> None:
    folder = tmp_path / "metadata"
    write(folder / "a.yaml", cells_yaml("_a"))
    write(folder / "b.yaml", cells_yaml("_b"))
    FolderWatcher(store, folder, "/warehouse").sync()
    (folder / "b.yaml").unlink()
    assert FolderWatcher(store, folder, "/warehouse").sync() == []
    assert "bronze_cells_b" in active(store, "dataset_registry")

    (removed,) = FolderWatcher(store, folder, "/warehouse", deactivate_missing=True).sync()
    assert removed.outcome == SyncOutcome.DEACTIVATED and removed.file == "b.yaml"
    assert active(store, "dataset_registry") == {"bronze_cells_a", "silver_cells_a"}
    assert active(store, "jobs") == {"cells_job_a"}
    assert "lat_range_b" not in active(store, "quality_rules")
    assert FolderWatcher(store, folder, "/warehouse", deactivate_missing=True).sync() == []

    # dropped in again: the same ids come back, updated in place
    write(folder / "b.yaml", cells_yaml("_b"))
    (back,) = FolderWatcher(store, folder, "/warehouse").sync()
    assert back.outcome == SyncOutcome.APPLIED
    assert "bronze_cells_b" in active(store, "dataset_registry")
    assert len(store.rows("dataset_registry")) == 4


@pytest.mark.subprocess
def test_watchers_started_together_apply_each_version_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "metadata"
    for name in ("a", "b", "c"):
        write(folder / f"{name}.yaml", cells_yaml(f"_{name}"))
    command = [str(BIN / "laketx"), "--home", str(home), "watch", str(folder), "--once", "--json"]
    # the store exists before they race (made in process: a `laketx init` child took ~1.5 s)
    MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default").ensure()
    procs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outputs]
    reported = [json.loads(line) for out, _ in outputs for line in out.splitlines() if line]
    assert sorted(r["file"] for r in reported) == ["a.yaml", "b.yaml", "c.yaml"], reported
    store = MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default")
    store.ensure()
    applied = [r["file"] for r in store.rows("metadata_syncs") if r["outcome"] == "APPLIED"]
    assert sorted(applied) == ["a.yaml", "b.yaml", "c.yaml"]  # once each, by one watcher each
    assert len(active(store, "jobs")) == 3


@pytest.mark.subprocess
@pytest.mark.server
def test_serve_keeps_a_watched_folder_applied(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "metadata"
    write(folder / "cells.yaml", cells_yaml("_s"))
    serve = [
        "serve", "--port", "0", "--scheduler-every", "1", "--watch", str(folder), "--no-warm-spark"
    ]  # fmt: skip
    server = subprocess.Popen(
        [str(BIN / "laketx"), "--home", str(home), *serve],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            if (home / "metadata").exists():
                store.ensure()
                if ("cells.yaml", "APPLIED") in outcomes(store):
                    break
            time.sleep(0.5)
        assert ("cells.yaml", "APPLIED") in outcomes(store)
        assert active(store, "jobs") == {"cells_job_s"}
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=120)
    assert server.returncode == 0, stderr
