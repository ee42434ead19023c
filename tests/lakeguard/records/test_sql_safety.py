"""SQL expressions from metadata are parsed and vetted; nothing else ever escapes (no Spark)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlglot import expressions as exp

from lakeguard.records.sqlsafety import referenced_columns, render, vet_expression, vet_query
from lakeguard.words.errors import UnsafeExpressionError


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
    from lakeguard.records.definitions.records import RuleDef
    from lakeguard.records.sqlsafety import vetted_sql
    from lakeguard.rules.quality.rules import compile_rule

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


# Cost limits: metadata SQL runs in the one Spark driver every tenant of `laketx serve` shares,
# so nothing may build a value (or generate rows) whose size comes from the data or a literal.
# Each call, and the function its refusal names.
SIZED_BY_DATA_OR_LITERAL = {
    "sequence(1, 100000000)": "sequence",
    "generate_series(1, n)": "sequence",
    "generate_date_array(d, e)": "generate_date_array",
    "array_repeat('x', 100000000)": "array_repeat",
    "repeat('x', n)": "repeat",
    "space(100000000)": "space",
    "randstr(100000000)": "randstr",
    "lpad(a, 100000000, 'x')": "lpad",
    "rpad(a, length(a) * 2)": "rpad",
    "lpad(a, 1001)": "lpad",
    "format_string('%1000000000s', a)": "format_string",
    "format_string('%-1000000000s|', a)": "format_string",
    "format_string('%.1000000000f', x)": "format_string",
    "format_string(pattern, a)": "format_string",
    "printf('%1$1000000000s', a)": "printf",
    "printf('%01000000000d', n)": "printf",
    "array_insert(arr, 100000000, 1)": "array_insert",
    "array_insert(arr, n, 1)": "array_insert",
    "aggregate(arr, '', (acc, x) -> concat(acc, acc))": "aggregate",
    "reduce(arr, arr, (acc, x) -> concat(acc, acc))": "aggregate",
    "count_min_sketch(a, 0.000000001, 0.99, 1)": "count_min_sketch",
}
GENERATING_ROWS = {
    "explode(arr)": "explode",
    "explode_outer(arr)": "explode_outer",
    "posexplode(arr)": "posexplode",
    "posexplode_outer(arr)": "posexplode_outer",
    "inline(structs)": "inline",
    "inline_outer(structs)": "inline_outer",
    "stack(100000000, a)": "stack",
    "unnest(arr)": "unnest",
    "variant_explode(v)": "variant_explode",
    "window(ts, '1 day', '1 second')": "window",
}
COSTLY = {**SIZED_BY_DATA_OR_LITERAL, **GENERATING_ROWS}
# Where an expression (a rule, a filter, a column) and a SQL model may hide a call.
IN_EXPRESSIONS = (
    "{} IS NOT NULL",
    "coalesce(size({}), 0) > 0",
    "upper(cast({} AS string)) = 'X'",
    "CASE WHEN a > 0 THEN {} END IS NULL",
    "size(transform(arr, x -> {})) > 0",
    "NOT ({} IS NULL) AND a > 0",
)
IN_MODELS = (
    "SELECT {} AS v FROM d",
    "SELECT k FROM d WHERE {} IS NOT NULL",
    "WITH c AS (SELECT k, {} AS v FROM d) SELECT k, v FROM c",
    "SELECT k, count({}) OVER (PARTITION BY k ORDER BY t) AS n FROM d",
    "SELECT k FROM d GROUP BY k HAVING max({}) IS NOT NULL",
    "SELECT s.v FROM (SELECT {} AS v FROM d) AS s",
    "SELECT d.k FROM d JOIN e ON d.k = e.k AND {} IS NOT NULL",
)


def spelled(call: str, cases: list[bool], backticks: bool) -> str:
    """`call` with its function's name in the given letter cases, backticked or not."""
    name, rest = call.split("(", 1)
    name = "".join(
        c.upper() if up else c.lower()
        for c, up in zip(name, [*cases, *[False] * len(name)], strict=False)
    )
    return f"{f'`{name}`' if backticks else name}({rest}"


def test_the_issue_s_sequence_is_refused_naming_it() -> None:
    """`sequence` passed before: sqlglot parses it as GenerateSeries (GENERATE_SERIES)."""
    with pytest.raises(UnsafeExpressionError) as info:
        vet_expression("size(sequence(1, 100000000)) > 0", where="rules[0].expression")
    assert info.value.errors == [
        {
            "path": "rules[0].expression",
            "message": "function sequence() builds a value whose size comes from the data or "
            "a literal: not allowed in metadata SQL",
        }
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(COSTLY)),
    st.lists(st.booleans(), max_size=40),
    st.booleans(),
    st.sampled_from(IN_EXPRESSIONS),
)
def test_costly_calls_are_refused_in_expressions_however_spelled(
    call: str, cases: list[bool], backticks: bool, where: str
) -> None:
    text = where.format(spelled(call, cases, backticks))
    with pytest.raises(UnsafeExpressionError) as info:
        vet_expression(text, where="w", allow_aggregates=True)
    message = info.value.errors[0]["message"]
    assert f"function {COSTLY[call]}()" in message, (text, message)
    assert "comes from the data" in message or "grow with each element" in message


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(COSTLY)),
    st.lists(st.booleans(), max_size=40),
    st.booleans(),
    st.sampled_from(IN_MODELS),
)
def test_costly_calls_are_refused_in_sql_models_however_spelled(
    call: str, cases: list[bool], backticks: bool, where: str
) -> None:
    text = where.format(spelled(call, cases, backticks))
    with pytest.raises(UnsafeExpressionError) as info:
        vet_query(text, where="m", datasets={"d", "e"})
    messages = " | ".join(e["message"] for e in info.value.errors)
    assert f"function {COSTLY[call]}()" in messages, (text, messages)


@pytest.mark.parametrize(
    "model",
    [
        "SELECT k, x FROM d LATERAL VIEW explode(arr) t AS x",
        "SELECT k, x FROM d LATERAL VIEW OUTER posexplode(arr) t AS p, x",
        "SELECT * FROM range(100000000)",
        "SELECT * FROM explode(sequence(1, 100000000))",
    ],
)
def test_generators_in_lateral_views_and_from_are_refused(model: str) -> None:
    with pytest.raises(UnsafeExpressionError) as info:
        vet_query(model, where="m", datasets={"d"})
    assert any("generates rows" in e["message"] for e in info.value.errors), info.value.errors


def test_a_recursive_with_is_refused() -> None:
    with pytest.raises(UnsafeExpressionError) as info:
        vet_query(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
            where="m",
            datasets={"d"},
        )
    assert "a recursive WITH generates rows" in info.value.errors[0]["message"]


@pytest.mark.parametrize(
    "expression",
    [
        "lpad(code, 5, '0') = '00042'",
        "rpad(name, 1000) <> ''",
        "lpad(code, -3) = ''",
        "format_string('%05d|%-10s|%.2f', n, name, x) <> ''",
        "printf('%1$s %1$s %%1000000000s', name) <> ''",
        "size(array_insert(arr, -2, 0)) > 0",
        "aggregate(arr, 0, (acc, x) -> acc + x) > 0",
        "aggregate(arr, CAST(0 AS BIGINT), (acc, x) -> acc + x, acc -> acc * 2) > 0",
        "make_interval(0, 0, 0, 1) IS NOT NULL",
        "size(split(name, ',')) > 1",
    ],
)
def test_sizes_from_small_literals_and_from_what_is_read_pass(expression: str) -> None:
    sent = render(vet_expression(expression, where="w"))
    assert render(vet_expression(sent, where="w")) == sent
    vet_query(f"SELECT {expression} AS ok FROM d", where="m", datasets={"d"})


def test_the_shipped_views_own_explode_still_vets() -> None:
    """md_src_det explodes each source's options: the project's own SQL, not a tenant's."""
    from lakeguard.store.viewdefs import view_def, view_names

    assert "md_src_det" in {view_def(name).name for name in view_names()}


@pytest.mark.parametrize("qualifier", ["builtin.", "system.builtin.", "SYSTEM.BUILTIN."])
@pytest.mark.parametrize("call", sorted(COSTLY))
def test_costly_calls_named_by_their_builtin_schema_are_refused(qualifier: str, call: str) -> None:
    """Spark 4 resolves `builtin.sequence` and `system.builtin.sequence` to the function."""
    with pytest.raises(UnsafeExpressionError):
        vet_expression(f"{qualifier}{call} IS NOT NULL", where="w")
    with pytest.raises(UnsafeExpressionError):
        vet_query(f"SELECT {qualifier}{call} AS v FROM d", where="m", datasets={"d"})
