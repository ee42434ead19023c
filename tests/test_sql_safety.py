"""SQL expressions from metadata are parsed and vetted; nothing else ever escapes (no Spark)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlglot import expressions as exp

from lakeguard.errors import UnsafeExpressionError
from lakeguard.sqlsafety import referenced_columns, render, vet_expression


def test_plain_predicates_pass_and_name_their_columns() -> None:
    tree = vet_expression(
        "upper(trim(radio)) IN ('GSM', 'LTE') AND lat BETWEEN -90 AND 90", where="w"
    )
    assert referenced_columns(tree) == {"radio", "lat"}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
@example("upper(radio) = 'GSM' -- trailing")  # the accepted branch runs on every run
def test_any_text_is_either_accepted_or_refused_cleanly(text: str) -> None:
    try:
        tree = vet_expression(text, where="fuzz")
    except UnsafeExpressionError as exc:
        assert exc.where == "fuzz"
        assert exc.errors
        return
    # accepted cleanly: what reaches Spark is the re-rendered tree, itself accepted, and
    # rendering it again changes nothing (no text survives that the tree does not hold)
    assert isinstance(tree, exp.Expression)
    sent = render(tree)
    assert sent.strip()
    again = vet_expression(sent, where="fuzz")
    assert render(again) == sent
    assert referenced_columns(again) == referenced_columns(tree)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["reflect", "java_method", "try_reflect"]), st.text(max_size=20))
def test_jvm_reflection_is_refused_whatever_the_arguments(name: str, arg: str) -> None:
    quoted = arg.replace("'", "")
    try:
        vet_expression(f"{name}('{quoted}', 'x')", where="w")
    except UnsafeExpressionError:
        return
    raise AssertionError(f"{name} was accepted")


def test_spark_gets_the_rerendered_tree_never_the_raw_text() -> None:
    """A trailing comment once swallowed the rest of the generated predicate."""
    from lakeguard.quality.rules import compile_rule
    from lakeguard.sqlsafety import vetted_sql
    from lakeguard.store.records import RuleDef

    assert vetted_sql("distance > 0 --", where="w") == "distance > 0"
    assert vetted_sql("a > 1 /* note */ and b < 2", where="w") == "a > 1 AND b < 2"
    rule = RuleDef(
        rule_id="r",
        dataset_id="d",
        rule_type="EXPRESSION",
        severity="FAIL",
        rule_expression='{"expression": "distance > 0 --"}',
    )
    assert compile_rule(rule).violation_sql == "(NOT coalesce((distance > 0), FALSE))"
