"""Read-only SQL views over the metadata tables, shipped as YAML data files (`views/*.yaml`).

Pure: a view is one SELECT over metadata tables (or other views), named unqualified. Loading
vets it with sqlglot (`sqlsafety.vet_query`: one query, built-in functions, known names only),
derives the tables and views it reads from the parsed tree, and resolves every column against
the table definitions, so a view naming a column that does not exist never ships. The seeds'
vocabulary (seed 000's MD_* tables, seed 004's `etl_control`) is served this way; Spark
sessions create the views, with what they read, when a query names them (openlaketx.tables).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from lakeguard.records.sqlsafety import render, vet_query
from lakeguard.records.table_defs import load_table_defs
from lakeguard.words.errors import LakeTxError, MetadataStoreError
from lakeguard.words.quoting import quote, sql_string

_FOLDER = "views"

# The seeds' names the shipped views serve, in the seeds' order (the documentation's order).
SEED_NAMES = (
    "MD_JOBS",
    "MD_JOBS_DET",
    "MD_JOBCONFIG",
    "MD_JOB_EXECUTION",
    "MD_DATASETS",
    "MD_SRC_CTRL",
    "MD_TGT_CTRL",
    "MD_SRC_DET",
    "MD_TGT_DET",
    "MD_SRC_TGT_CTRL",
    "etl_control",
)


class ViewColumn(BaseModel):
    """One output column of a view: where it comes from and what it means."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    source: str = Field(alias="from", description="Our table.column (or how it is derived)")
    meaning: str


class ViewDef(BaseModel):
    """A view as shipped: its name, the seed vocabulary it serves, its columns and its SQL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    seed_name: str = Field(description="The seed's own name for it (MD_JOBS, etl_control)")
    seed: str
    comment: str
    columns: tuple[ViewColumn, ...]
    sql: str

    @model_validator(mode="after")
    def _named_after_the_seed(self) -> ViewDef:
        if self.seed_name.lower() != self.name:
            raise ValueError(f"view {self.name!r} serves {self.seed_name!r}: name it so")
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate column names in view {self.name}")
        return self


@dataclass(frozen=True)
class VettedView:
    """A view whose SQL passed vetting: its parsed tree and the names it reads."""

    view: ViewDef
    tree: Any
    reads: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.view.name


def _entry(name: str) -> Any:
    return resources.files("lakeguard.store").joinpath(_FOLDER, f"{name}.yaml")


@cache
def view_names() -> frozenset[str]:
    """Names of the shipped views (from the file names: nothing is parsed)."""
    folder = resources.files("lakeguard.store").joinpath(_FOLDER)
    return frozenset(
        e.name.removesuffix(".yaml") for e in folder.iterdir() if e.name.endswith(".yaml")
    )


def _fail(name: str, what: str) -> MetadataStoreError:
    return MetadataStoreError(
        f"invalid view definition {name}.yaml: {what}",
        where=f"lakeguard/store/{_FOLDER}/{name}.yaml",
        fix="correct the shipped view definition",
    )


@cache
def view_def(name: str) -> VettedView:
    """One shipped view, parsed and vetted (a broken shipped file is a packaging bug)."""
    if name not in view_names():
        raise MetadataStoreError(
            f"unknown metadata view {name!r}", fix=f"use one of: {', '.join(sorted(view_names()))}"
        )
    try:
        view = ViewDef.model_validate(yaml.safe_load(_entry(name).read_text(encoding="utf-8")))
    except Exception as exc:
        raise _fail(name, str(exc)) from exc
    if view.name != name:
        raise _fail(name, f"it declares name {view.name!r}; name the file after the view")
    return vet_view(view)


def vet_view(view: ViewDef) -> VettedView:
    """Vet a view's SQL (one query over known tables and views, built-in functions only),
    resolve its columns against what it reads, and check they are the declared columns."""
    known = (set(load_table_defs()) | view_names()) - {view.name}
    try:
        # our own SQL: md_src_det explodes each source's options into rows
        query = vet_query(view.sql, where=f"view {view.name}", datasets=known, row_generators=True)
    except LakeTxError as exc:
        raise _fail(view.name, exc.what) from exc
    vetted = VettedView(view, query.tree, query.parents)
    outputs = _resolved_outputs(vetted)
    declared = [c.name for c in view.columns]
    if outputs != declared:
        raise _fail(view.name, f"the query returns {outputs}, the file declares {declared}")
    return vetted


def _columns_of(name: str) -> list[str]:
    tables = load_table_defs()
    if name in tables:
        return [c.name for c in tables[name].columns]
    return [c.name for c in view_def(name).view.columns]


def _resolved_outputs(vetted: VettedView) -> list[str]:
    """Resolve every column of the view against what it reads; its output column names."""
    schema: dict[str, object] = {n: dict.fromkeys(_columns_of(n), "string") for n in vetted.reads}
    try:
        qualified = qualify(vetted.tree.copy(), schema=schema, dialect="spark")
    except (OptimizeError, SqlglotError) as exc:
        raise _fail(vetted.name, str(exc).split(". Line:")[0]) from exc
    return [s.alias_or_name for s in qualified.selects]


def load_view_defs() -> dict[str, VettedView]:
    """Every shipped view, vetted, by name."""
    return {name: view_def(name) for name in sorted(view_names())}


@dataclass(frozen=True)
class Needed:
    """What a session registers for some names: tables, then views in creation order."""

    tables: tuple[str, ...]
    views: tuple[VettedView, ...]


def needed(names: Iterable[str]) -> Needed:
    """The metadata tables and views to register so that `names` can be queried: the tables
    named, the views named, and everything those views read (views before their readers).
    Names that are neither are left out."""
    tables = set(load_table_defs())
    wanted = set(names)
    order: list[VettedView] = []
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in path:
            raise _fail(name, f"views read each other in a cycle: {' -> '.join((*path, name))}")
        vetted = view_def(name)
        for read in vetted.reads:
            if read in view_names():
                visit(read, (*path, name))
            else:
                wanted.add(read)
        done.add(name)
        order.append(vetted)

    for name in sorted(wanted & view_names()):
        visit(name, ())
    return Needed(tuple(sorted(wanted & tables)), tuple(order))


def create_view_sql(vetted: VettedView, namespace: str) -> str:
    """The Spark DDL creating the view in `namespace` (if absent), each name it reads
    qualified by that namespace, each column with its meaning as comment.

    What reaches Spark is the re-rendering of the vetted tree, never the text as written.
    """
    tree = vetted.tree.copy()
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if table.name in vetted.reads and table.name not in ctes:
            table.set("db", exp.to_identifier(namespace, quoted=True))
            table.set("this", exp.to_identifier(table.name, quoted=True))
    view = vetted.view
    columns = ", ".join(f"{quote(c.name)} COMMENT {sql_string(c.meaning)}" for c in view.columns)
    return (
        f"CREATE VIEW IF NOT EXISTS {quote(namespace)}.{quote(view.name)} ({columns}) "
        f"COMMENT {sql_string(view.comment)} AS {render(tree)}"
    )


def mapping_markdown() -> str:
    """The column-by-column mapping of every view, as the Markdown of docs/seed-vocabulary.md."""
    out: list[str] = []
    views = sorted(load_view_defs().values(), key=lambda v: _seed_order(v.view.seed_name))
    for vetted in views:
        view = vetted.view
        reads = ", ".join(f"`{r}`" for r in vetted.reads)
        out += [
            f"### {view.seed_name} → `lakeguard.{view.name}` (seed {view.seed})",
            "",
            view.comment,
            "",
            f"Reads: {reads}.",
            "",
            "| column | from | meaning |",
            "|---|---|---|",
        ]
        out += [f"| `{c.name}` | {_cell(c.source)} | {_cell(c.meaning)} |" for c in view.columns]
        out.append("")
    return "\n".join(out)


def _seed_order(seed_name: str) -> tuple[int, str]:
    return (SEED_NAMES.index(seed_name) if seed_name in SEED_NAMES else len(SEED_NAMES), seed_name)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
