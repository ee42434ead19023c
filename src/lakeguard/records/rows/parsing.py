"""How a record reads a stored row's JSON-in-STRING and list columns: leniently where a
bad value has a default, strictly (a ValidationError naming the column) for a kind's options."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticError

from lakeguard.words.errors import ValidationError


def json_or(text: str | None, default: Any) -> Any:
    """The JSON in `text`; `default` when it is empty or not JSON."""
    if not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default


def str_tuple(value: Any) -> tuple[str, ...]:
    """A stored list (or nothing) as a tuple of strings."""
    return tuple(str(v) for v in value or ())


M = TypeVar("M", bound=BaseModel)


def parsed_options(parse: Callable[[], M], where: str) -> M:
    """What `parse` makes of a stored JSON column, its pydantic errors as a ValidationError."""
    try:
        return parse()
    except PydanticError as exc:
        errors = [
            {"path": ".".join([where, *map(str, e["loc"])]), "message": e["msg"]}
            for e in exc.errors()
        ]
        raise ValidationError(
            f"{where} does not parse: {errors[0]['path']}: {errors[0]['message']}",
            where=where,
            errors=errors,
            fix="correct the options (or re-apply the definition's document)",
        ) from None
