"""A document's sections as plain data, the way `export` writes them back (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, JsonValue

# One entry of a document's section (a dataset, a rule, a channel) as YAML and JSON hold it.
Entry = dict[str, JsonValue]
# A whole document: its `version` and its sections, each a list of entries.
Document = dict[str, int | list[Entry]]


def section(document: Document, name: str) -> list[Entry]:
    """The entries of a document's section (none when it has no such section)."""
    found = document.get(name, [])
    return found if isinstance(found, list) else []


def lean(entry: Mapping[str, JsonValue], model: type[BaseModel] | None) -> Entry:
    """`entry` without nulls and without the values its model would default to anyway, its
    fields in the model's order (the order the docs and the JSON Schema give)."""
    fields = model.model_fields if model else {}
    names = [n for n in fields if n != "type"]
    if "type" in fields:  # a rule's kind reads first, after what it is and where it applies
        names.insert(names.index("dataset") + 1 if "dataset" in names else 1, "type")
    order = {name: i for i, name in enumerate(names)}
    out: Entry = {}
    for name, value in sorted(entry.items(), key=lambda kv: order.get(kv[0], len(order))):
        field = fields.get(name)
        if value is None:
            continue
        if field is not None and not field.is_required():  # noqa: SIM102 - narrows field
            if field.get_default(call_default_factory=True) == value:
                continue
        out[name] = value
    return out


def drop_none(entry: Mapping[str, JsonValue]) -> Entry:
    """`entry` without its nulls (what a document leaves out)."""
    return {k: v for k, v in entry.items() if v is not None}
