"""What every rule kind is: a typed spec that validates, checks, compiles and explains itself.

A rule kind is one pydantic class (one module under `lakeguard/rules/quality/kinds/`), registered in
`kinds/__init__.py`. The same class is what a YAML document declares, what `quality_rules`
stores (its parameters as `rule_expression` JSON) and what the engine compiles: a stored rule
is parsed back into its class, never re-validated by string keys.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue
from sqlglot import exp

from lakeguard.records.judged import canonical_expression
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.sqlsafety import referenced_columns, vet_expression
from lakeguard.words.errors import LakeTxError
from lakeguard.words.fields import Identifier, Strict
from lakeguard.words.problems import Problem
from lakeguard.words.quoting import quote, sql_string
from lakeguard.words.vocabulary import Severity

# Each dataset's output columns as far as the document determines them (None: unknown).
KnownColumns = Mapping[str, list[str] | None]
# Fields every kind has; the rest are the kind's parameters (`rule_expression`).
COMMON_FIELDS = frozenset({"id", "dataset", "severity", "description", "type"})


class RuleKind(Strict):
    """The fields every rule has, and the behaviour each kind gives itself."""

    id: Identifier
    dataset: Identifier
    severity: Severity = Severity.FAIL
    threshold: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Share of failing rows tolerated before breach"
    )
    description: str | None = None

    # How a rule written under a source column (seed 001's rule sets) names its column:
    # "columns" (a list), "column" (one), or None when the kind cannot be written there.
    per_column: ClassVar[Literal["columns", "column"] | None] = None
    # Its outcome depends on when it runs (a replay cannot repeat rows it dropped).
    depends_on_clock: ClassVar[bool] = False
    # What its parameters must be, said when stored parameters do not parse.
    usage: ClassVar[str] = ""

    @property
    def rule_type(self) -> str:
        return str(getattr(self, "type"))  # noqa: B009 - each kind declares its own Literal

    def columns_used(self) -> list[str]:
        """Columns of its dataset the rule names (checked against the dataset's columns)."""
        return []

    def check(self, known: KnownColumns, loc: tuple[Any, ...]) -> list[Problem]:
        """Checks across the document, beyond the model: by default, that its columns exist."""
        columns = known.get(self.dataset)
        if columns is None:
            return []
        return [
            Problem(loc, f"column {name!r} is not a column of {self.dataset}")
            for name in self.columns_used()
            if name not in columns
        ]

    @abstractmethod
    def compile(self) -> CompiledRule:
        """The per-row violation flag or the batch check the engine evaluates."""

    def explain(self) -> str:
        """One line saying what the rule asks, for `explain`."""
        return self.rule_type

    def parameters(self) -> dict[str, JsonValue]:
        """The kind's own parameters, as stored in `quality_rules.rule_expression`."""
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in COMMON_FIELDS}

    def _compiled(self, **fields: Any) -> CompiledRule:
        """A CompiledRule with the common fields filled in."""
        return CompiledRule(
            rule_id=self.id,
            rule_type=self.rule_type,
            severity=self.severity.value,
            threshold=self.threshold,
            expression=canonical_expression(self.parameters()),
            asks=self.explain(),
            **fields,
        )


def as_text(columns: list[str] | tuple[str, ...]) -> str:
    """SQL showing a row's value(s) of `columns` as one sample string."""
    if len(columns) == 1:
        return f"CAST({quote(columns[0])} AS STRING)"
    parts = ", ".join(f"coalesce(CAST({quote(c)} AS STRING), 'NULL')" for c in columns)
    return f"concat_ws('|', {parts})"


def literal(value: Any) -> str:
    """A Python value as a SQL literal."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return sql_string(str(value))


NEEDS_AGGREGATE = "an AGGREGATE rule needs an aggregate (sum, count, avg, ...)"


def has_aggregate(tree: exp.Expression) -> bool:
    """Whether a vetted condition aggregates the batch (what an AGGREGATE rule must do)."""
    return tree.find(exp.AggFunc) is not None


def check_bounds(kind: str, low: float | None, high: float | None) -> None:
    if low is None and high is None:
        raise ValueError(f"a {kind} rule needs min, max or both")
    if low is not None and high is not None and low > high:
        raise ValueError(f"min {low} is greater than max {high}")


def vet(
    text: str, loc: tuple[Any, ...], known: list[str] | None, *, aggregates: bool = False
) -> list[Problem]:
    """Problems of a SQL expression a rule carries: unsafe, no aggregate where one is needed,
    or naming columns its dataset does not have."""
    path = Problem(loc, "").path
    try:
        tree = vet_expression(text, where=path, allow_aggregates=aggregates)
    except LakeTxError as exc:
        return [Problem(loc, exc.what)]
    if aggregates and not has_aggregate(tree):
        return [Problem(loc, NEEDS_AGGREGATE)]
    if known is not None:
        lower = {c.lower() for c in known}
        missing = sorted(c for c in referenced_columns(tree) if c.lower() not in lower)
        if missing:
            return [Problem(loc, f"unknown column(s) {', '.join(missing)}")]
    return []
