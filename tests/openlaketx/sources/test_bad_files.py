"""Files that cannot be read, without Spark: the per-file checks, the file a Spark failure
names, which listed files stay rejected, and an operator's release (`laketx files`)."""

from __future__ import annotations

import gzip
import io
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from lakeguard.reads.reader import StoreReader
from lakeguard.records.decisions.rows import DataVersionRow
from lakeguard.records.sources.kinds.file import SeenFile
from lakeguard.records.sources.progress import Rejection, SourceProgress, still_rejected
from lakeguard.records.sources.progress_rows import RejectedFileRow, SourceProgressRow
from lakeguard.words.errors import ConfigError, NotRegisteredError
from lakeguard.words.vocabulary import FileAction
from openlaketx.cli import app
from openlaketx.sources.bad_files import spark_culprits, unreadable
from openlaketx.sources.files import select_files
from tests.support.project import Project

NOW = datetime(2026, 12, 1, 12, 0)
CSV = b"radio,cell,lat,updated\nGSM,1,10.5,100\n"


def parquet_bytes() -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"cell": list(range(1000))}), sink)
    return sink.getvalue()


CASES: list[tuple[str, bytes, dict[str, str], str | None]] = [
    ("good.csv", CSV, {}, None),
    ("good.csv.gz", gzip.compress(CSV * 200), {}, None),
    ("empty.csv", b"", {}, None),
    ("utf8.csv", "radio,ville\nGSM,Zürich\n".encode() * 60, {}, None),  # a character cut at 1 KiB
    ("latin1.csv", "radio\nZürich\n".encode("latin-1"), {"encoding": "latin1"}, None),
    ("bz.csv.bz2", b"BZh91AY&SY garbage", {}, None),  # another codec: Spark's to decompress
    ("lines.json", b'{"cell": 1}\n{"cell": 2}\n', {}, None),
    ("good.parquet", parquet_bytes(), {}, None),
    ("fake.csv.gz", CSV, {}, "is not gzip, though its name"),
    ("hidden_gzip.csv", gzip.compress(CSV), {}, "is gzip-compressed, but its name"),
    ("binary.csv", b"radio,cell\x00\x01\x02\xff", {}, "is binary, not csv text"),
    ("latin1_as_utf8.csv", "radio\nZürich\n".encode("latin-1"), {}, "is not UTF-8 text"),
    ("login.csv", b"\n  <!DOCTYPE html><html><title>Sign in</title>", {}, "is an HTML page"),
    ("error.csv", b'<?xml version="1.0"?><Error>AccessDenied</Error>', {}, "is an XML document"),
    ("page.json", b"<html><body>503</body></html>", {}, "is an HTML page, not json"),
    ("text.json", b"cell=1\n", {}, "is not JSON"),
    ("cut.parquet", parquet_bytes()[:-100], {}, "is not a complete parquet file"),
    ("garbage.parquet", b"PAR1" + b"\x07" * 300 + b"PAR1", {}, "footer that cannot be read"),
    ("csv.parquet", CSV, {}, "is not a complete parquet file"),
]


@pytest.mark.parametrize(("name", "body", "options", "said"), CASES, ids=[c[0] for c in CASES])
def test_the_cheap_checks_tell_a_bad_file_by_its_footer_or_first_kib(
    tmp_path: Path, name: str, body: bytes, options: dict[str, str], said: str | None
) -> None:
    path = tmp_path / name
    path.write_bytes(body)
    file_format = name.split(".")[1] if name.count(".") > 1 else name.rsplit(".", 1)[1]
    file_format = {"bz": "csv"}.get(file_format, file_format)
    found = unreadable(f"file:{path}", file_format, options)
    if said is None:
        assert found is None
    else:
        assert found is not None and said in found


def test_a_file_that_vanished_is_not_called_bad(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        unreadable(f"file:{tmp_path}/gone.csv", "csv", {})


def seen(path: str, size: int = 10, minute: int = 0) -> SeenFile:
    return SeenFile(path=path, size=size, modification_time=NOW + timedelta(minutes=minute))


def test_the_file_a_spark_failure_names_is_the_one_probed_and_not_a_longer_name() -> None:
    files = [("file:/in/a.csv", seen("file:/in/a.csv")), ("file:/in/a.csv.gz", seen("x"))]
    probed: list[str] = []

    def refusal(path: str) -> str | None:
        probed.append(path)
        return "cannot be read by Spark (EOFException)"

    message = (
        "org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while "
        "reading file file:///in/a.csv.gz.  SQLSTATE: KD001"
    )
    (found,) = spark_culprits(files, message, refusal)
    assert probed == ["file:/in/a.csv.gz"] and found.mark.key() == "x"
    probed.clear()  # a read failure that names no file of the read: each is read alone
    unnamed = "Job aborted: java.io.EOFException: Unexpected end of input stream"
    assert len(spark_culprits(files, unnamed, refusal)) == 2
    assert probed == ["file:/in/a.csv", "file:/in/a.csv.gz"]
    probed.clear()  # a failure that is not a read (a rule's expression): no file is probed
    assert spark_culprits(files, "[DIVIDE_BY_ZERO] Division by zero", refusal) == []
    assert probed == []
    probed.clear()  # a file that vanished is no bad file (the run retries, as before)
    gone = message.replace("NO_HINT", "FILE_NOT_EXIST")
    assert spark_culprits(files, gone, refusal) == [] and probed == []
    # Spark answered, but the file alone reads: not the file's fault
    assert spark_culprits(files, message, lambda _: None) == []


def test_a_rejected_file_stays_aside_until_it_changes() -> None:
    bad = seen("file:/in/b.csv", 7)
    listed = [seen("file:/in/a.csv"), bad, seen("file:/in/c.csv")]
    progress = SourceProgress().put_aside("obj", [Rejection(bad, "is not UTF-8 text")])
    rejected = progress.rejected_of("obj", SeenFile)
    assert rejected == {bad.path: (bad, "is not UTF-8 text")}
    chosen = select_files(listed, {"file:/in/a.csv": listed[0]}, rejected)
    assert [f.path for f in chosen.new] == ["file:/in/c.csv"]
    assert chosen.rejected == [bad] and [f.path for f in chosen.unchanged] == ["file:/in/a.csv"]
    fixed = seen("file:/in/b.csv", 9, minute=5)  # rewritten: read again
    assert select_files([fixed], {}, rejected).new == [fixed]


def row(action: FileAction, minute: int, path: str = "file:/in/b.csv") -> RejectedFileRow:
    return RejectedFileRow(
        tenant_id="default",
        dataset_id="bronze_x",
        source_object_id="obj",
        action=action,
        kind="FILE",
        path=path,
        reason="is not UTF-8 text" if action == FileAction.REJECTED else None,
        recorded_at=NOW + timedelta(minutes=minute),
        state=seen(path).state(),
    )


def test_a_rejection_holds_until_a_release_or_a_later_take() -> None:
    rejected = row(FileAction.REJECTED, 1)
    assert still_rejected([rejected], {}) == [rejected]
    released = [rejected, row(FileAction.RELEASED, 2)]
    assert still_rejected(released, {}) == []
    again = [*released, row(FileAction.REJECTED, 3)]  # read again after the release, still bad
    assert still_rejected(again, {}) == [again[-1]]
    key = ("obj", "FILE", "file:/in/b.csv")
    assert still_rejected([rejected], {key: NOW + timedelta(minutes=2)}) == []  # taken since
    assert still_rejected([rejected], {key: NOW}) == [rejected]  # taken before: stays


def test_files_rejected_and_release_need_no_spark(tmp_path: Path, project: Project) -> None:
    """`laketx files rejected` lists what a run put aside; `release` appends a RELEASED row per
    file, by its path as typed (relative, plain or `file:`), or --all of a dataset."""
    from openlaketx.lakehouse import Lakehouse

    home = tmp_path / "home"
    lh = Lakehouse.open(home=home)
    lh.apply(project.yaml)
    obj = f"cells{project.suffix}_csv"
    bad = project.add("bad.csv", ["GSM,1,1.0,1"])
    other = project.add("other.csv", ["GSM,2,1.0,1"])
    rows = [
        RejectedFileRow.rejected(
            seen(f"file:{p}"),
            "is not UTF-8 text",
            tenant_id="default",
            dataset_id=project.bronze,
            source_object_id=obj,
            run_id="r1",
            recorded_at=NOW,
        )
        for p in (bad, other)
    ]
    lh.store.append_rows(rows)
    runner = CliRunner()

    def laketx(*args: str) -> Any:
        return runner.invoke(app, ["--home", str(home), "files", *args])

    listed = laketx("rejected", "--json")
    assert listed.exit_code == 0, listed.output
    assert [(r["path"], r["reason"]) for r in json.loads(listed.stdout)] == [
        (f"file:{bad}", "is not UTF-8 text"),
        (f"file:{other}", "is not UTF-8 text"),
    ]
    unknown = laketx("release", str(tmp_path / "nothing.csv"))
    assert unknown.exit_code == NotRegisteredError.exit_code
    assert "no rejected file at" in unknown.output
    assert laketx("release", "--all").exit_code == ConfigError.exit_code  # --all needs --dataset
    released = laketx("release", str(bad), "--by", "ops", "--json")
    assert released.exit_code == 0, released.output
    assert json.loads(released.stdout) == {"released": [f"file:{bad}"]}
    assert [r.path for r in StoreReader(lh.store).versions.rejected_files()] == [f"file:{other}"]
    everything = laketx("release", "--dataset", project.bronze, "--all", "--by", "oncall")
    assert everything.exit_code == 0, everything.output
    assert "1 file(s) released" in everything.stdout
    assert (
        StoreReader(lh.store).versions.rejected_files() == [] and laketx("rejected").exit_code == 0
    )
    stored = lh.store.read(RejectedFileRow)  # appended, nothing updated
    assert sorted(r.action for r in stored) == ["REJECTED", "REJECTED", "RELEASED", "RELEASED"]
    assert {r.released_by for r in stored if r.action == FileAction.RELEASED} == {"ops", "oncall"}


def test_a_rejected_file_taken_since_it_was_rejected_is_not_listed(
    empty_store_template: Path, tmp_path: Path
) -> None:
    from tests.support.project import copied_store

    store = copied_store(empty_store_template, tmp_path / "meta")
    store.append_rows([row(FileAction.REJECTED, 1)])
    reader = StoreReader(store)
    assert [r.path for r in reader.versions.rejected_files("bronze_x")] == ["file:/in/b.csv"]
    progress = reader.versions.source_progress("bronze_x")
    assert set(progress.rejected_of("obj", SeenFile)) == {"file:/in/b.csv"}
    taken = SourceProgressRow.of(
        seen("file:/in/b.csv", 99),
        tenant_id="default",
        dataset_id="bronze_x",
        source_object_id="obj",
        run_id="r2",
        data_version=1,
        recorded_at=NOW + timedelta(minutes=5),
    )
    store.append_rows([taken])
    # the take counts once its run has an approved version: unapproved, the file stays aside
    assert len(StoreReader(store).versions.rejected_files("bronze_x")) == 1
    version = DataVersionRow(
        tenant_id="default",
        dataset_id="bronze_x",
        version=1,
        snapshot_ref="0",
        schema_hash="h",
        row_count=1,
        run_id="r2",
        promoted_at=NOW + timedelta(minutes=6),
        promoted_by="job",
    )
    store.append_rows([version], _by_gate=True)
    assert StoreReader(store).versions.rejected_files("bronze_x") == []
    assert StoreReader(store).versions.source_progress("bronze_x").rejected == {}
