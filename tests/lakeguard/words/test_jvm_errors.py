"""What a step that failed in the JVM records: the root exception's class and message (the
deepest cause behind the Py4J error), secrets masked, never "Py4JJavaError: An error occurred
while calling o162.save." -- in the attempt's row, the job's error and `laketx runs`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.words.errors import describe, redact, root_cause
from openlaketx.cli import app
from tests.support.project import Project


class FakeThrowable:
    """A JVM exception as Py4J shows it: `toString()` and `getCause()`."""

    def __init__(self, text: str, cause: FakeThrowable | None = None) -> None:
        self.text, self.cause = text, cause

    def getCause(self) -> FakeThrowable | None:  # the JVM's names
        return self.cause

    def toString(self) -> str:
        return self.text


class GoneThrowable(FakeThrowable):
    """One whose JVM has gone (a driver killed): every call fails."""

    def getCause(self) -> FakeThrowable | None:
        raise RuntimeError("the gateway is closed")


class FakePy4JError(Exception):
    def __init__(self, java: FakeThrowable) -> None:
        super().__init__("An error occurred while calling o162.save.\n: trace")
        self.java_exception = java


def test_a_py4j_error_is_described_by_its_root_cause_with_secrets_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-example-secret")
    root = FakeThrowable(
        "org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException: no credentials for "
        "jdbc:postgresql://db/x?user=u&password=hunter2 key wJalrXUtnFEMI-example-secret\nat ..."
    )
    top = FakeThrowable("org.apache.spark.SparkException: Job aborted", FakeThrowable("x", root))
    error = FakePy4JError(top)
    assert root_cause(error).startswith("org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException: ")
    said = describe(error)
    assert said == (
        "org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException: no credentials for "
        "jdbc:postgresql://db/x?user=u&password=**** key ****"
    )
    assert "o162" not in said and "hunter2" not in said
    # a JVM gone: the Python side's first line
    assert root_cause(FakePy4JError(GoneThrowable("-"))) == (
        "An error occurred while calling o162.save."
    )
    # other errors keep their type and first line
    assert describe(ValueError("bad\nmore")) == "ValueError: bad"
    assert redact("s3a://AKIA:s3cr3t@bucket/k token=abc, fs.s3a.secret.key=xyz") == (
        "s3a://AKIA:****@bucket/k token=****, fs.s3a.secret.key=****"
    )


@pytest.mark.spark
def test_a_spark_job_that_fails_in_the_jvm_records_its_root_exception(
    lakehouse: Any, project: Project
) -> None:
    """Bronze's Parquet files are overwritten with text after it published them: silver's
    read fails in the JVM's tasks (a Py4J error whose own message names only the call:
    "An error occurred while calling o163.save."), and the attempt, the job and
    `laketx runs` record the root exception instead."""
    lakehouse.apply(project.yaml)
    project.deliver("d1.csv", ["GSM,1,10.5,1", "LTE,2,20.0,1"])
    assert lakehouse.run(project.bronze).status == "COMPLETED"
    table = Path(lakehouse.config.warehouse) / "bronze" / project.bronze.removeprefix("bronze_")
    files = list(table.glob("**/*.parquet"))
    assert files
    for file in files:
        file.write_text("not parquet at all\n")
    result = lakehouse.run(project.silver)
    assert result.status == "FAILED"
    (attempt,) = lakehouse.reader.runs.attempts(result.run_id)
    said = attempt.error_message or ""
    # the root of "Job aborted due to stage failure": the local file system's checksum
    # (Spark wrote a .crc beside each file), and only a Py4J error is described by it
    assert said.startswith("org.apache.hadoop.fs.ChecksumException: Checksum error: file:"), said
    assert any(str(f) in said for f in files), said
    assert "Py4JJavaError" not in said and "calling o" not in said
    (run,) = [r for r in lakehouse.runs(5) if r.pipeline_logging_id == result.run_id]
    # the job's one failing task: its reason alone, as the attempt said it
    assert run.error_message == said
    listed = CliRunner().invoke(app, ["--home", str(lakehouse.config.home), "runs", "--json"])
    assert listed.exit_code == 0, listed.output
    (shown,) = [r for r in json.loads(listed.stdout) if r["pipeline_logging_id"] == result.run_id]
    assert shown["error_message"] == run.error_message
