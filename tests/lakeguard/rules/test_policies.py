"""Policies: the expression language, PII lineage, and each policy type blocking or alerting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.records.definitions.records import PolicyDef
from lakeguard.rules.catalog.loader import load_file
from lakeguard.rules.policy.evaluate import checks
from lakeguard.rules.policy.expression import evaluate, parse
from lakeguard.rules.policy.pii import Shape, raw_pii
from lakeguard.words.errors import ValidationError
from tests.support.project import Project, assert_sound, write


def test_the_expression_language_is_small_and_checked() -> None:
    tree = parse("rows >= 0.5 * rows_mean AND NOT rows > 2 * rows_mean", "VOLUME", where="w")
    assert evaluate(tree, {"rows": 10, "rows_mean": 10})
    assert not evaluate(tree, {"rows": 30, "rows_mean": 10})
    for bad, reason in [
        ("rows > 'x'", "strings"),
        ("colour = 1", "not a VOLUME metric"),
        ("rand() > 0", "not part of the language"),
        ("rows", "comparison"),
        ("rows >", "does not parse"),
    ]:
        with pytest.raises(ValidationError, match=reason):
            parse(bad, "VOLUME", where="w")


def test_pii_flows_raw_unless_masked() -> None:
    shapes = {
        "b": Shape("b"),
        "s": Shape(
            "s", ("b",), columns={"id": "id", "email_hash": "sha2(email, 256)", "n": "upper(name)"}
        ),
        "g": Shape("g", ("b",), sql="WITH c AS (SELECT id, email AS e FROM b) SELECT id, e FROM c"),
        "m": Shape("m", ("b",), sql="SELECT md5(email) AS m, count(*) AS n FROM b GROUP BY 1"),
        "star": Shape("star", ("s",), sql="SELECT * FROM s"),
    }
    raw = raw_pii(shapes, {"b": {"email", "name"}})
    assert raw == {"b": {"email", "name"}, "s": {"n"}, "g": {"e"}, "m": set(), "star": {"n"}}


def policy(kind: str, enforcement: str, expression: str = "") -> PolicyDef:
    return PolicyDef(
        policy_id="p",
        policy_type=kind,
        layers=("silver",),
        expression=expression,
        enforcement=enforcement,
    )


def test_block_policies_block_and_alert_policies_log() -> None:
    from datetime import datetime, timedelta

    from lakeguard.records.decisions.versions import ApprovedVersion
    from lakeguard.rules.policy.kinds import BatchFacts

    now = datetime(2026, 11, 1, 12)
    one_pii = BatchFacts(rows=1, now=now, raw_pii=("email",))
    (blocked,) = checks([policy("PII", "BLOCK")], one_pii)
    assert not blocked.passed and blocked.blocking and "raw_pii_columns = 0" in blocked.detail
    (alert,) = checks([policy("PII", "ALERT")], one_pii)
    assert not alert.passed and not alert.blocking
    parent = ApprovedVersion(
        dataset_id="p",
        version=1,
        snapshot_ref="0",
        run_id="r",
        upstream_refs={},
        row_count=1,
        promoted_at=now - timedelta(hours=1),
    )
    (fine,) = checks(
        [policy("SLA", "BLOCK", "stalest_parent_hours <= 5")],
        BatchFacts(rows=1, now=now, parents_latest=lambda: {"p": parent}),
    )
    assert fine.passed


GOLD = """
source_systems: [{id: crm, options: {root: x}}]
source_objects:
  - {id: o, system: crm, locator: "*.csv", dataset: b, columns: [{name: id}, {name: email, pii: true}]}
datasets:
  - {id: b, layer: bronze}
  - {id: s, layer: silver, parents: [b], business_keys: [id]}
  - id: g
    layer: gold
    sql: SELECT id, {select} FROM s
policies:
  - {id: no_raw_pii_in_gold, type: PII, applies_to: [gold], enforcement: BLOCK}
  - {id: volume, type: VOLUME, applies_to: [bronze], expression: "{volume}"}
"""


def test_a_pii_column_referenced_raw_by_a_gold_model_is_refused_at_validate(tmp_path: Path) -> None:
    ok = GOLD.replace("{select}", "sha2(email, 256) AS who").replace("{volume}", "rows > 0")
    load_file(write(tmp_path / "ok.yaml", ok))
    raw = GOLD.replace("{select}", "email").replace("{volume}", "rows > 0")
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "raw.yaml", raw))
    assert "datasets[2].sql (line" in str(info.value)
    assert "pii column(s) email reach gold raw" in str(info.value)
    bad = GOLD.replace("{select}", "md5(email) AS who").replace("{volume}", "rows >>> 1")
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "bad.yaml", bad))
    assert "policies[1].expression (line" in str(info.value)


def with_policies(p: Project, block: str) -> None:
    text = p.yaml.read_text().replace("jobs:", f"policies:\n{block}\njobs:")
    p.yaml.write_text(text)


@pytest.mark.spark
def test_sla_and_pii_policies_block_or_alert_promotions(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    with_policies(
        p,
        f"""  - {{id: fresh_parents{p.suffix}, type: SLA, applies_to: [silver], expression: "stalest_parent_hours < 0"}}
  - {{id: pii_watch{p.suffix}, type: PII, applies_to: [silver], enforcement: ALERT}}""",
    )
    p.yaml.write_text(
        p.yaml.read_text().replace(
            "{name: radio, type: string}", "{name: radio, type: string, pii: true}"
        )
    )
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100"])
    result = lh.run(p.job)
    bronze, silver = result.steps
    assert bronze.status == "SUCCESS"
    assert silver.status == "BLOCKED"  # the SLA policy says its parent is too old
    reason = silver.reason or ""
    assert f"check policy:fresh_parents{p.suffix}" in reason
    decision = lh.explain(p.silver)
    checks = {c.name: c for c in decision.evidence.checks}
    assert checks[f"policy:fresh_parents{p.suffix}"].result == "BLOCK"
    assert checks[f"policy:pii_watch{p.suffix}"].result == "ALERT"
    assert decision.evidence.upstream == {p.bronze: 1}  # the parent version it would use
    (advice,) = decision.advice
    assert advice.startswith(f"policy:fresh_parents{p.suffix}: meet it")
    assert "raw pii: radio" in checks[f"policy:pii_watch{p.suffix}"].detail
    from typer.testing import CliRunner

    from openlaketx.cli import app

    shown = CliRunner().invoke(
        app, ["--home", str(lh.config.home), "explain", p.silver, "--run", silver.run_id]
    )
    assert shown.exit_code == 0, shown.output
    assert "to get it allowed" in shown.output and "checks and policies" in shown.output
    assert_sound(lh, p.bronze, p.silver)


@pytest.mark.spark
def test_volume_and_schema_policies(shared_lakehouse: Any, project: Project) -> None:
    lh, p = shared_lakehouse, project
    with_policies(
        p,
        f"""  - {{id: volume{p.suffix}, type: VOLUME, applies_to: [bronze], window: 3, expression: "history < 2 OR rows <= 2 * rows_mean"}}
  - {{id: no_breaking{p.suffix}, type: SCHEMA, applies_to: [bronze]}}""",
    )
    p.yaml.write_text(
        p.yaml.read_text().replace(
            "max_malformed_ratio: 0.2", "max_malformed_ratio: 0.2\n    schema_profile: permissive"
        )
    )
    lh.apply(p.yaml)
    for i in range(2):
        p.add(f"d{i}.csv", [f"GSM,{i},1.0,1", f"LTE,{i},2.0,1"])
        assert lh.run(p.bronze).status == "COMPLETED"
    p.add("big.csv", [f"GSM,{i},1.0,1" for i in range(100, 110)])  # 10 rows against a mean of 2
    big = lh.run(p.bronze).steps[0]
    assert big.status == "BLOCKED" and f"policy:volume{p.suffix}" in (big.reason or "")
    (p.incoming / "big.csv").unlink()
    p.add("narrow.csv", ["GSM,7,1.0", "LTE,8,2.0"], header="radio,cell,lat")  # `updated` dropped
    dropped = lh.run(p.bronze).steps[0]
    assert dropped.status == "BLOCKED"  # permissive ALERTs the drop; the SCHEMA policy blocks it
    assert f"policy:no_breaking{p.suffix}" in (dropped.reason or "")
    assert_sound(lh, p.bronze)
