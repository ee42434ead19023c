"""Vetting of SQL expressions that come from metadata (rule expressions, filters, columns).

Metadata is data an operator may not fully trust, and it ends up inside Spark SQL. Only a plain,
side-effect-free scalar expression is accepted: no statements, no subqueries, no JVM reflection,
no table-valued or generator functions, no user-defined functions. sqlglot parses the text
with the Spark dialect; anything it cannot parse is refused too. What reaches Spark is the
re-rendering of the vetted tree (`vetted_sql`), never the raw text.

Neither an expression nor a SQL model may build a value, or generate rows, whose size comes
from the data or a literal rather than from what it reads (`lakeguard.records.sqlcost`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from lakeguard.records.sqlcost import costly, function_name
from lakeguard.words.errors import UnsafeExpressionError

# Nodes that run statements (never part of a query or an expression).
_STATEMENTS: tuple[type, ...] = (
    exp.Insert,
    exp.Delete,
    exp.Update,
    exp.Drop,
    exp.Create,
    exp.Command,
    exp.Merge,
    exp.Alter,
    exp.Set,
    exp.Use,
    exp.Placeholder,
)

# Nodes that read other data, run statements or escape the expression.
_FORBIDDEN_NODES: tuple[type, ...] = (
    *_STATEMENTS,
    exp.Select,
    exp.Subquery,
    exp.Union,
    exp.Table,
    exp.Lateral,
    exp.Explode,
    exp.Posexplode,
    exp.Window,
    exp.AggFunc,
)

# Spark functions that sqlglot does not model, which we still allow by name (lower-case).
_ALLOWED_ANONYMOUS = frozenset(
    {
        "rlike",
        "regexp",
        "regexp_like",
        "timestamp_seconds",
        "timestamp_millis",
        "try_cast",
        "isnan",
        "nanvl",
        "ilike",
        "startswith",
        "endswith",
        "contains",
        "len",
        "char_length",
        "character_length",
        "btrim",
        "to_number",
        "try_to_number",
        "make_date",
        # bounded like format_string (`costly`)
        "printf",
    }
)

# Functions that call into the JVM or the environment; refused even if sqlglot knows them.
_FORBIDDEN_NAMES = frozenset(
    {
        "reflect",
        "java_method",
        "try_reflect",
        "input_file_name",
        "current_user",
        "session_user",
        "user",
        "uuid",
        "rand",
        "randn",
        "random",
        "shuffle",
        "assert_true",
        "raise_error",
        "read_files",
        "from_avro",
        "from_protobuf",
    }
)


def vet_expression(text: str, *, where: str, allow_aggregates: bool = False) -> Any:
    """Parse `text` as one Spark SQL scalar expression and refuse anything unsafe.

    Returns the parsed expression; raises UnsafeExpressionError naming `where` and the reason.
    """

    def refuse(reason: str) -> UnsafeExpressionError:
        return UnsafeExpressionError(
            f"unsafe or invalid SQL expression {text!r}: {reason}",
            where=where,
            errors=[{"path": where, "message": reason}],
            fix="use a plain column expression: columns, literals, operators and built-in "
            "scalar functions only",
        )

    if not isinstance(text, str) or not text.strip():
        raise refuse("the expression is empty")
    if ";" in text:
        raise refuse("';' is not allowed: one expression, not statements")
    try:
        parsed = sqlglot.parse(text, read="spark")
    except SqlglotError as exc:
        raise refuse(f"it does not parse: {str(exc).splitlines()[0]}") from exc
    if len(parsed) != 1 or parsed[0] is None:
        raise refuse("exactly one expression is expected")
    tree = parsed[0]
    if isinstance(tree, exp.Alias):
        raise refuse("aliases are not allowed here; the name comes from the metadata")
    for node in tree.walk():
        if (reason := costly(node)) is not None:
            raise refuse(reason)
        if isinstance(node, exp.AggFunc) and allow_aggregates:
            continue
        if isinstance(node, _FORBIDDEN_NODES):
            raise refuse(f"{type(node).__name__.lower()} is not allowed in a row expression")
        if isinstance(node, exp.Func):
            name = function_name(node)
            if name in _FORBIDDEN_NAMES:
                raise refuse(f"function {name}() is not allowed")
            if isinstance(node, exp.Anonymous) and name not in _ALLOWED_ANONYMOUS:
                raise refuse(f"unknown function {name}()")
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            raise refuse("'*' is not allowed")
    return tree


@dataclass(frozen=True)
class VettedQuery:
    """A SQL model that passed vetting: its tree and the datasets it reads."""

    tree: Any
    parents: tuple[str, ...]


def vet_query(
    text: str, *, where: str, datasets: Collection[str], row_generators: bool = False
) -> VettedQuery:
    """Parse a SQL model: one SELECT (CTEs, joins, aggregates, windows allowed) that reads
    only registered datasets, named by id. Every problem is reported, each with `where`.
    `row_generators`: explode and its kin are allowed (the shipped views, our own SQL)."""
    problems: list[str] = []

    def refuse(reasons: list[str]) -> UnsafeExpressionError:
        return UnsafeExpressionError(
            f"SQL model refused: {'; '.join(reasons)}",
            where=where,
            errors=[{"path": where, "message": r} for r in reasons],
            fix="write one SELECT over the parents, naming each by its dataset id; built-in "
            "functions only",
        )

    if not isinstance(text, str) or not text.strip():
        raise refuse(["the model is empty"])
    try:
        parsed = sqlglot.parse(text, read="spark")
    except SqlglotError as exc:
        raise refuse([f"it does not parse: {str(exc).splitlines()[0]}"]) from exc
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise refuse(["exactly one statement is expected"])
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise refuse([f"a {type(tree).__name__.upper()} statement is not a query"])
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    parents: set[str] = set()
    for node in tree.walk():
        if isinstance(node, _STATEMENTS):
            problems.append(f"{type(node).__name__.lower()} is not allowed in a model")
        elif (reason := costly(node, row_generators=row_generators)) is not None:
            problems.append(reason)
        elif isinstance(node, exp.Func):
            name = function_name(node)
            if name in _FORBIDDEN_NAMES:
                problems.append(f"function {name}() is not allowed")
            elif isinstance(node, exp.Anonymous) and name not in _ALLOWED_ANONYMOUS:
                problems.append(f"unknown function {name}() (user-defined functions are refused)")
        elif isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier):
                problems.append("table functions are not allowed; read parents by dataset id")
            elif node.db or node.catalog:
                problems.append(
                    f"{node.sql(dialect='spark')}: name parents by dataset id, not by table or path"
                )
            elif node.name in ctes:
                continue
            elif node.name not in datasets:
                problems.append(f"unknown dataset {node.name!r}")
            else:
                parents.add(node.name)
    if problems:
        raise refuse(sorted(set(problems)))
    return VettedQuery(tree, tuple(sorted(parents)))


def render_query(query: VettedQuery, views: Mapping[str, str]) -> str:
    """The model's Spark SQL with each parent dataset id replaced by its view's name."""
    tree = query.tree.copy()
    for table in tree.find_all(exp.Table):
        if table.name in views and not table.db:
            table.set("this", exp.to_identifier(views[table.name]))
    return render(tree)


def render(tree: Any) -> str:
    """The Spark SQL text of a vetted tree: what reaches Spark, never the text as written.

    Re-rendering drops comments, so `distance > 0 --` cannot swallow what the engine appends.
    """
    return str(tree.sql(dialect="spark", comments=False))


def vetted_sql(text: str, *, where: str) -> str:
    """`vet_expression`, then `render`: the only form in which metadata SQL reaches Spark."""
    return render(vet_expression(text, where=where))


def referenced_columns(tree: Any) -> set[str]:
    """Names of the columns an expression reads (unqualified, as written)."""
    return {column_root(col) for col in tree.find_all(exp.Column)}


def column_root(column: Any) -> str:
    """The column a reference reads: an expression over one dataset's rows names no table, so
    `owner.name` is field `name` of the struct column `owner` (sqlglot reads it as a table
    and a column)."""
    parts = column.parts
    return str(parts[0].name) if parts else str(column.name)


_QUALIFIED = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*`?([A-Za-z_]\w*)`?")


def tables_named(text: str) -> set[tuple[str, str]]:
    """The (database, table) names a user's query mentions (for registering just those in a
    session). Statements sqlglot keeps as raw commands (DESCRIBE DETAIL, SHOW ...) or cannot
    parse are scanned for `db.table` words: a name too many costs a failed lookup, one too few
    an error."""
    quiet = logging.getLogger("sqlglot")
    level, quiet.level = quiet.level, logging.ERROR  # "falling back to a Command" is expected
    try:
        trees = [t for t in sqlglot.parse(text, read="spark") if t is not None]
    except SqlglotError:
        trees = []
    finally:
        quiet.level = level
    found = {
        (node.db.lower(), node.name.lower())
        for tree in trees
        for node in tree.find_all(exp.Table)
        if node.db and node.name
    }
    if not trees or any(isinstance(t, exp.Command) for t in trees):
        found |= {(db.lower(), table.lower()) for db, table in _QUALIFIED.findall(text)}
    return found
