"""What makes SQL from metadata costly: a value, or rows, whose size comes from the data or a
literal rather than from what it reads (`sequence(1, 100000000)`, `repeat(s, n)`,
`explode(...)`). It would run in the one Spark driver every tenant of `laketx serve` shares
(OWASP API4), so `lakeguard.records.sqlsafety` refuses each such node (`costly`).
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError


def function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


# Functions whose result's size comes from the data or a literal, not from what they read.
# They are refused by node type, by name and by the name Spark runs, since sqlglot spells
# some otherwise: `sequence` parses as GenerateSeries (GENERATE_SERIES), BigQuery's
# `generate_date_array` renders as Spark's SEQUENCE, `space` as REPEAT, `unnest` as EXPLODE.
_BUILDER_NODES: tuple[type, ...] = (
    exp.GenerateSeries,  # and ExplodingGenerateSeries
    exp.GenerateDateArray,
    exp.GenerateTimestampArray,
    exp.Repeat,
    exp.Space,
    exp.Randstr,
)
_BUILDER_NAMES = frozenset(
    {
        "sequence",
        "generate_series",
        "generate_date_array",
        "generate_timestamp_array",
        "array_repeat",
        "repeat",
        "space",
        "randstr",
        # sketches sized by an argument: count_min_sketch(x, 1e-9, ...) is 2e9 counters wide
        "count_min_sketch",
        "theta_sketch_agg",
    }
)
# Generators: as many rows as their input has elements, or as a literal says; several in a
# row multiply (LATERAL VIEW explode(a) LATERAL VIEW explode(b)).
_ROW_GENERATOR_NODES: tuple[type, ...] = (
    exp.Explode,  # and explode_outer, posexplode, posexplode_outer
    exp.Inline,
    exp.Stack,
    exp.Unnest,
    exp.Generator,
    exp.SplitToTable,
    exp.StrtokSplitToTable,
)
_ROW_GENERATOR_NAMES = frozenset(
    {
        "explode",
        "explode_outer",
        "posexplode",
        "posexplode_outer",
        "inline",
        "inline_outer",
        "stack",
        "unnest",
        "variant_explode",
        "variant_explode_outer",
        "generator",
        "range",
        # window(ts, '1 day', '1 second') puts each row in 86400 sliding windows
        "window",
    }
)
# How large a literal may size a padded string, a formatted field or an array's new slot.
MAX_LITERAL_SIZE = 1000
# A java.util.Formatter conversion: flags, then width and precision (an argument index ends
# in '$'); '%%' is a literal percent sign.
_FORMAT_SPEC = re.compile(r"%%|%([^a-zA-Z%]*)")
_FORMAT_NUMBER = re.compile(r"(\d+)(\$?)")
_SPARK_CALL = re.compile(r"\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*\(")
_NUMERIC_TYPES = frozenset(exp.DataType.NUMERIC_TYPES)


def _spark_name(node: exp.Func) -> str:
    """The name of the function Spark runs for `node` (its rendering's), lower-case."""
    try:
        text = node.sql(dialect="spark", unsupported_level=ErrorLevel.IGNORE, comments=False)
    except SqlglotError:
        return ""
    found = _SPARK_CALL.match(text)
    return found.group(1).lower() if found else ""


def _shown_name(node: exp.Func) -> str:
    """The function's name as Spark users write it (sqlglot's own names differ for some)."""
    if isinstance(node, exp.GenerateSeries) and not isinstance(node, exp.ExplodingGenerateSeries):
        return "sequence"
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    if isinstance(node, exp.Format):
        return "format_string"
    if isinstance(node, exp.Reduce):
        return "aggregate"
    return function_name(node)


def _literal(node: Any) -> Any:
    """`node` without the parentheses, signs and numeric casts around a literal."""
    while isinstance(node, exp.Paren | exp.Neg) or (
        isinstance(node, exp.Cast) and node.to.this in _NUMERIC_TYPES
    ):
        node = node.this
    return node


def _small_number(node: Any) -> bool:
    """Whether `node` is a whole number literal of at most MAX_LITERAL_SIZE (either sign)."""
    value = _literal(node)
    if not isinstance(value, exp.Literal) or value.is_string:
        return False
    try:
        return abs(int(str(value.this))) <= MAX_LITERAL_SIZE
    except ValueError:
        return False


def _small_format(node: Any) -> bool:
    """Whether `node` is a string literal whose every width and precision is small."""
    if not isinstance(node, exp.Literal) or not node.is_string:
        return False
    for spec in _FORMAT_SPEC.finditer(str(node.this)):
        for number, index in _FORMAT_NUMBER.findall(spec.group(1) or ""):
            if not index and int(number) > MAX_LITERAL_SIZE:
                return False
    return True


def costly(node: Any, *, row_generators: bool = False) -> str | None:
    """Why `node` would build a value (or rows) whose size comes from the data or a literal,
    or None. `row_generators`: explode and its kin are allowed (the shipped views' own SQL)."""
    if isinstance(node, exp.With) and node.args.get("recursive"):
        return (
            "a recursive WITH generates rows until its own condition stops it: not allowed "
            "in metadata SQL"
        )
    if not isinstance(node, exp.Func):
        return None
    names = {function_name(node), _spark_name(node)}
    shown = _shown_name(node)
    if isinstance(node, _BUILDER_NODES) or names & _BUILDER_NAMES:
        return (
            f"function {shown}() builds a value whose size comes from the data or a literal: "
            "not allowed in metadata SQL"
        )
    if not row_generators and (
        isinstance(node, _ROW_GENERATOR_NODES) or names & _ROW_GENERATOR_NAMES
    ):
        return (
            f"function {shown}() generates rows whose number comes from the data or a "
            "literal: not allowed in metadata SQL"
        )
    sized = f"function {shown}() builds a value whose size comes from the data or a literal"
    small = f"a number literal of at most {MAX_LITERAL_SIZE}"
    if isinstance(node, exp.Pad) and not _small_number(node.args.get("expression")):
        return f"{sized}: its length must be {small}"
    if isinstance(node, exp.ArrayInsert) and not _small_number(node.args.get("position")):
        # a position past the end pads the array with nulls up to it
        return f"{sized}: its position must be {small}"
    if isinstance(node, exp.Format) or names & {"printf", "format_string"}:
        # a width or precision in the pattern pads: '%1000000000s'
        pattern = node.this if isinstance(node, exp.Format) else next(iter(node.expressions), None)
        if not _small_format(pattern):
            return (
                f"{sized}: its pattern must be a string literal whose widths and precisions "
                f"are at most {MAX_LITERAL_SIZE}"
            )
    if isinstance(node, exp.Reduce):
        start = _literal(node.args.get("initial"))
        if not (isinstance(start, exp.Literal) and not start.is_string):
            # a string or array accumulator can double with each element it folds
            return (
                f"function {shown}() folds an array into a value that can grow with each "
                "element: in metadata SQL only a number literal may start it"
            )
    return None
