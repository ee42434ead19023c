"""Spark SQL type names as metadata declares them, and what each may be used for (pure).

A declared column type is a scalar (`string`, `bigint`, `decimal(10,2)`, ...) or, for JSON
sources, a nested type: `array<T>`, `map<string,T>` or `struct<name:T,...>`, nested freely.
Nested types are parsed here, without Spark or sqlglot (LakeGuard starts no JVM to validate a
document): `parse_type` says what is wrong and where, `canonical` writes a type as Spark's
`simpleString` does (so a declared type and the one a table holds compare as text), and
`spark_ddl` writes it for a reader's schema with every field name quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMERIC_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long", "float", "double")
INTEGRAL_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long")
TEMPORAL_TYPES = ("date", "timestamp")
# the scalar types a source object may declare (`long` and `integer` are Spark's other names)
SCALAR_TYPES = ("string", "boolean", *INTEGRAL_TYPES, "float", "double", *TEMPORAL_TYPES)
NESTED_TYPES = ("array", "map", "struct")
# Spark's simpleString of the scalars it spells otherwise
_SPARK_NAME = {"long": "bigint", "integer": "int"}
_DECIMAL = re.compile(r"decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_numeric(data_type: str) -> bool:
    kind = data_type.lower()
    return kind in NUMERIC_TYPES or kind.startswith("decimal")


def is_watermark_type(data_type: str) -> bool:
    """Numbers, dates and timestamps grow; a watermark column must be one of them."""
    return is_numeric(data_type) or data_type.lower() in TEMPORAL_TYPES


def is_nested(data_type: str) -> bool:
    """Whether a declared type is an array, a map or a struct."""
    head = data_type.lstrip().lower()
    return any(head.startswith(n) and head[len(n) :].lstrip().startswith("<") for n in NESTED_TYPES)


class TypeProblem(ValueError):
    """A declared type that does not parse: what is wrong, and at which character."""


@dataclass(frozen=True)
class DataType:
    """A parsed type: `kind` is a scalar name (as Spark spells it), `decimal`, or a nested
    kind with its `children` (an array's element; a map's key and value; a struct's
    fields, named in `names`)."""

    kind: str
    children: tuple[DataType, ...] = ()
    names: tuple[str, ...] = ()
    precision: int = 0
    scale: int = 0

    @property
    def scalar(self) -> bool:
        return self.kind not in NESTED_TYPES

    def simple(self) -> str:
        """As Spark's `simpleString` writes it: `struct<a:int,b:array<string>>`."""
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.kind == "array":
            return f"array<{self.children[0].simple()}>"
        if self.kind == "map":
            return f"map<{self.children[0].simple()},{self.children[1].simple()}>"
        if self.kind == "struct":
            fields = ",".join(
                f"{_written(n)}:{c.simple()}"
                for n, c in zip(self.names, self.children, strict=True)
            )
            return f"struct<{fields}>"
        return self.kind

    def ddl(self) -> str:
        """For a reader's schema (Spark's DDL): every field name quoted, its case kept."""
        if self.kind == "array":
            return f"ARRAY<{self.children[0].ddl()}>"
        if self.kind == "map":
            return f"MAP<{self.children[0].ddl()}, {self.children[1].ddl()}>"
        if self.kind == "struct":
            fields = ", ".join(
                "`" + n.replace("`", "``") + f"`: {c.ddl()}"
                for n, c in zip(self.names, self.children, strict=True)
            )
            return f"STRUCT<{fields}>"
        return self.simple().upper()


def _written(name: str) -> str:
    return name if _NAME.fullmatch(name) else "`" + name + "`"


def parse_type(text: str) -> DataType:
    """A declared type, parsed (TypeProblem: what is wrong, at which character)."""
    parser = _Parser(text)
    found = parser.type()
    parser.skip()
    if parser.at < len(text):
        raise parser.problem("unexpected text after the type")
    return found


def canonical(text: str) -> str:
    """A declared type as a table holds it: nested types as Spark's `simpleString`; a
    scalar as written (`long` stays `long`: stored declarations keep their spelling)."""
    found = parse_type(text)
    return text if found.scalar else found.simple()


def spark_ddl(text: str) -> str:
    """A declared type for a reader's schema; a scalar exactly as before (upper case)."""
    found = parse_type(text)
    return text.upper() if found.scalar else found.ddl()


class _Parser:
    """A recursive-descent parser of one type string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def problem(self, what: str) -> TypeProblem:
        near = self.text[self.at : self.at + 12] or "the end"
        return TypeProblem(f"{what} at character {self.at + 1} of {self.text!r} (near {near!r})")

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def expect(self, char: str) -> None:
        self.skip()
        if not self.text.startswith(char, self.at):
            raise self.problem(f"expected {char!r}")
        self.at += 1

    def word(self) -> str:
        self.skip()
        found = _WORD.match(self.text, self.at)
        if found is None:
            raise self.problem("expected a type")
        self.at = found.end()
        return found.group(0)

    def type(self) -> DataType:
        self.skip()
        decimal = _DECIMAL.match(self.text, self.at)
        if decimal is not None:
            precision, scale = int(decimal.group(1)), int(decimal.group(2))
            if not 1 <= precision <= 38 or scale > precision:
                raise self.problem("a decimal's precision is 1 to 38 and its scale at most that")
            self.at = decimal.end()
            return DataType("decimal", precision=precision, scale=scale)
        start = self.at
        name = self.word().lower()
        if name == "array":
            self.expect("<")
            element = self.type()
            self.expect(">")
            return DataType("array", (element,))
        if name == "map":
            self.expect("<")
            key = self.type()
            if key.kind != "string":
                self.at = start
                raise self.problem("a map's keys are strings (JSON object keys): map<string,T>")
            self.expect(",")
            value = self.type()
            self.expect(">")
            return DataType("map", (key, value))
        if name == "struct":
            return self.struct()
        if name in SCALAR_TYPES:
            return DataType(_SPARK_NAME.get(name, name))
        self.at = start
        raise self.problem(
            f"unknown type {name!r}; types are {', '.join(SCALAR_TYPES)}, decimal(p,s), "
            "array<T>, map<string,T>, struct<name:T,...>"
        )

    def struct(self) -> DataType:
        self.expect("<")
        names: list[str] = []
        children: list[DataType] = []
        while True:
            name = self.field_name()
            if name.lower() in (n.lower() for n in names):
                raise self.problem(f"field {name!r} is declared twice")
            self.expect(":")
            names.append(name)
            children.append(self.type())
            self.skip()
            if self.text.startswith(">", self.at):
                self.at += 1
                return DataType("struct", tuple(children), tuple(names))
            self.expect(",")

    def field_name(self) -> str:
        self.skip()
        if self.text.startswith("`", self.at):
            end = self.text.find("`", self.at + 1)
            if end <= self.at + 1:
                raise self.problem("expected a field name between backquotes")
            name = self.text[self.at + 1 : end]
            self.at = end + 1
            return name
        found = _NAME.match(self.text, self.at)
        if found is None:
            raise self.problem("expected a field name")
        self.at = found.end()
        return found.group(0)
