"""A file source's feed on a real S3-compatible object store (SeaweedFS, started by the suite),
listed without a JVM: as Hadoop globs it for a read, for the file-arrival trigger and for the
check that a run has nothing new (no Spark here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.project import cells_yaml


@pytest.fixture
def on_s3(s3_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Settings pointing at the server (children inherit them); a fresh metadata home."""
    prefix: str = s3_server.point_at(monkeypatch)
    monkeypatch.setenv("LAKETX_METADATA_HOME", prefix)
    monkeypatch.setenv("LAKETX_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return prefix


def test_files_on_the_object_store_are_listed_as_hadoop_globs_them(
    s3_server: Any, on_s3: str, tmp_path: Path
) -> None:
    """Without a JVM: a glob matches within one path segment, a folder gives its direct
    children, hidden names are skipped; the same tree on a local disk lists the same."""
    from openlaketx import storage
    from openlaketx.sources.bad_files import unreadable
    from openlaketx.sources.files import list_files
    from openlaketx.sources.listing import local_files

    names = ["in/a.csv", "in/b.json", "in/_skip.csv", "in/.skip.csv", "in/sub/c.csv", "out/d.csv"]
    fs = s3_server.filesystem()
    for name in names:
        with fs.open_output_stream(f"{on_s3.removeprefix('s3://')}/feed/{name}") as out:
            out.write(b"x,y\n1,2\n")
        (tmp_path / "feed" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "feed" / name).write_bytes(b"x,y\n1,2\n")
    cases = {"in/*.csv": ["in/a.csv"], "in": ["in/a.csv", "in/b.json"], "*/d.csv": ["out/d.csv"]}
    for pattern, expected in cases.items():
        remote = [f.location for f in storage.glob_files(f"{on_s3}/feed/{pattern}")]
        assert remote == [f"{on_s3}/feed/{e}" for e in expected], pattern
        local = local_files(str(tmp_path / "feed" / pattern)) or []
        assert [f.path for f in local] == [f"file:{tmp_path}/feed/{e}" for e in expected]
    (seen,) = list_files(f"{on_s3}/feed/in/*.csv", content_hash=True)
    assert seen.size == 8 and seen.content_hash == storage.sha256(f"{on_s3}/feed/in/a.csv")
    # a file that cannot be read is told from its first KiB on the object store too
    with fs.open_output_stream(f"{on_s3.removeprefix('s3://')}/feed/in/login.csv") as out:
        out.write(b"<!DOCTYPE html><title>Sign in</title>")
    assert unreadable(seen.path, "csv", {}) is None
    assert unreadable(f"{on_s3}/feed/in/login.csv", "csv", {}) == "is an HTML page, not csv"
    storage.move_file(f"{on_s3}/feed/in/login.csv", f"{on_s3}/feed/out/login.csv")
    storage.move_file(f"{on_s3}/feed/in/a.csv", f"{on_s3}/feed/archive/a.csv")
    assert storage.glob_files(f"{on_s3}/feed/in/*.csv") == []
    assert storage.header_line(f"{on_s3}/feed/archive/a.csv") == "x,y"


def test_a_feed_on_the_object_store_is_listed_for_arrivals_and_news_without_a_jvm(
    s3_server: Any, on_s3: str, tmp_path: Path
) -> None:
    """The scheduler's file-arrival trigger and `laketx run`'s check for anything new list a
    feed on the object store themselves: a delivered file is waiting, and new until a batch
    took it; a second one is new again."""
    from lakeguard.records.sources.kinds.file import SeenFile
    from lakeguard.records.sources.progress import SourceProgress
    from openlaketx.lakehouse import Lakehouse
    from openlaketx.sources.kinds import engine
    from openlaketx.sources.listing import store_files

    feed = f"{s3_server.fresh_prefix()}/feed"  # beside the metadata, not in it
    doc = tmp_path / "cells.yaml"
    doc.write_text(cells_yaml().replace("{root: feed}", f'{{root: "{feed}"}}'))
    lh = Lakehouse.open()
    lh.apply(doc)
    fs = s3_server.filesystem()
    for name in ("d1.csv", "_d0.csv"):  # a hidden name is no delivery
        with fs.open_output_stream(f"{feed.removeprefix('s3://')}/incoming/{name}") as out:
            out.write(b"radio,cell,lat,updated\nGSM,1,10.5,1\n")
    registry = lh.reader.definitions.registry()
    (obj,) = registry.source_objects("bronze_cells")
    system, reach = registry.system(obj.source_system_id), lh.reader.tenant_reach()
    files = engine("file")
    empty = SourceProgress()
    (waiting,) = files.arrivals(system, obj, empty, reach) or []
    assert waiting.startswith(f"{feed}/incoming/d1.csv|36|")
    assert files.nothing_new(system, obj, empty, reach) is None
    listed = store_files(f"{feed}/incoming/*.csv") or []
    taken = {f.path: f.model_dump(mode="json") for f in listed}
    took = SourceProgress(marks={(obj.source_object_id, SeenFile.KIND): taken})
    assert files.arrivals(system, obj, took, reach) == []
    said = files.nothing_new(system, obj, took, reach)
    assert said == f"no new file at {feed}/incoming/*.csv"
    with fs.open_output_stream(f"{feed.removeprefix('s3://')}/incoming/d2.csv") as out:
        out.write(b"radio,cell,lat,updated\nLTE,2,20.0,2\n")
    assert files.nothing_new(system, obj, took, reach) is None
    assert [a.split("|")[0] for a in files.arrivals(system, obj, took, reach) or []] == [
        f"{feed}/incoming/d2.csv"
    ]
