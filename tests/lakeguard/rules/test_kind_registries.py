"""Source kinds and policy types are typed classes in one registry each (pure, no Spark)."""

from __future__ import annotations

from datetime import datetime

import pytest

from lakeguard.records.definitions.records import PolicyDef
from lakeguard.records.sources.kinds import SOURCE_KINDS, source_kind
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.policy.expression import DEFAULTS, METRICS, parse
from lakeguard.rules.policy.kinds import POLICY_KINDS, BatchFacts, policy_kind
from lakeguard.words.errors import ValidationError
from lakeguard.words.vocabulary import SourceKindName, SourceLoad


def test_every_source_kind_has_its_engine_and_its_vocabulary_word() -> None:
    from openlaketx.sources.kinds import ENGINES

    assert sorted(ENGINES) == sorted(SOURCE_KINDS) == sorted(SourceKindName)
    assert sorted(SOURCE_KINDS) == ["delta", "file", "http", "jdbc"]


def test_each_kind_classifies_the_failures_spark_raises_reading_it() -> None:
    """A database that went away mid-read is worth a retry, refused credentials are not; a
    file that vanished is worth a retry; a failure a kind does not recognise stays terminal."""
    from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
    from lakeguard.records.sources.rows import SourceSystemRow
    from openlaketx.sources.kinds import engine

    db = SourceSystemDef.from_row(
        SourceSystemRow(
            source_system_id="db", kind="jdbc", enabled=True, connection_options='{"url": "jdbc:x"}'
        )
    )
    fs = SourceSystemDef.from_row(SourceSystemRow(source_system_id="fs", kind="file", enabled=True))
    obj = SourceObjectDef(
        source_object_id="o", source_system_id="db", locator="t", format="jdbc", dataset_id="b"
    )
    lost = engine("jdbc").classify("Connection reset by peer", db, obj)
    assert lost is not None and lost.transient
    refused = engine("jdbc").classify("FATAL: password authentication failed", db, obj)
    assert refused is not None and not refused.transient
    vanished = engine("file").classify("java.io.FileNotFoundException: gone.csv", fs, obj)
    assert vanished is not None and vanished.transient
    assert engine("file").classify("something else broke", fs, obj) is None


def test_a_source_kind_carries_its_formats_and_default_load() -> None:
    assert source_kind("file").formats[0] == "csv"
    assert source_kind("jdbc").default_load == SourceLoad.FULL
    assert source_kind("delta").default_load == SourceLoad.INCREMENTAL
    with pytest.raises(KeyError, match="source kinds are file, jdbc, delta, http"):
        source_kind("ftp")


def test_a_document_is_checked_by_the_kind_of_each_source() -> None:
    doc = """
version: 1
source_systems:
  - {id: db, kind: jdbc, options: {url: "postgres://x"}}
  - {id: fs}
source_objects:
  - {id: a, system: db, locator: t, dataset: b, load_type: incremental, columns: [{name: x}]}
  - {id: c, system: fs, locator: "*.csv", dataset: b, partition_column: x, columns: [{name: x}]}
datasets: [{id: b, layer: bronze}]
"""
    with pytest.raises(ValidationError) as info:
        validate_text(doc, "doc.yaml")
    messages = sorted(e["message"] for e in info.value.errors)
    assert "a jdbc system needs a jdbc: url" in messages
    assert "an incremental source needs a watermark_column" in messages
    assert any(
        m.startswith("not an option of file sources (theirs: on_changed_file,") for m in messages
    )
    assert "an incremental source must be the only source object of its dataset" in messages


def test_policy_types_give_the_language_its_metrics_and_defaults() -> None:
    assert sorted(METRICS) == sorted(DEFAULTS) == sorted(POLICY_KINDS)
    for name, kind in POLICY_KINDS.items():
        parse(kind.default, name, where="test")  # every default parses in its own language
    with pytest.raises(KeyError, match="policy types are PII, SCHEMA, SLA, VOLUME, PROFILE"):
        policy_kind("COST")


def test_volume_measures_a_band_from_the_history_it_asks_for() -> None:
    asked: list[int] = []

    def history(newest: int) -> list[int]:
        asked.append(newest)
        return [10, 100, 110, 90][-newest:]

    policy = PolicyDef(
        policy_id="v",
        layers=("silver",),
        policy_type="VOLUME",
        expression="rows >= 0",
        enforcement="BLOCK",
        parameters={"window": 3},
    )
    facts = BatchFacts(rows=50, now=datetime(2026, 1, 1), rows_written=history)
    metrics = policy_kind("VOLUME").measure(facts, policy)
    assert metrics == {
        "rows": 50.0,
        "rows_mean": 100.0,
        "rows_min": 90.0,
        "rows_max": 110.0,
        "history": 3.0,
    }
    assert asked == [3]  # only the window's versions are read
    # other types never pay for the history read
    policy_kind("SCHEMA").measure(facts, policy)
    assert asked == [3]
