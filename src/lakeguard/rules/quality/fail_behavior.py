"""What a breached FAIL rule does to a batch (pure): `quarantine` blocks the whole batch,
`drop` sets aside only the rows failing declared row-level rules, `abort` blocks and stops the
job."""

from __future__ import annotations

from collections.abc import Iterable

from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.words.vocabulary import DeleteMissing, FailBehavior, Layer, LoadType


def whole_dataset(load_type: LoadType, delete_missing: DeleteMissing) -> bool:
    """Whether each batch is the whole dataset (a full load, or a snapshot whose missing keys
    are deleted): there, a row left out would read as deleted, so none may be dropped."""
    return load_type == LoadType.FULL or delete_missing != DeleteMissing.NONE


def fail_behavior(dataset: DatasetDef, objects: Iterable[SourceObjectDef]) -> FailBehavior:
    """A derived dataset's own setting; for bronze, `abort` if any of its source objects
    aborts, `drop` only if all of them drop, else `quarantine`. Never `drop` where a batch is
    the whole dataset (refused at validate too)."""
    behavior: FailBehavior
    if dataset.layer != Layer.BRONZE:
        behavior = dataset.transform.fail_behavior
    else:
        chosen = {o.fail_behavior for o in objects}
        behavior = (
            FailBehavior.ABORT
            if FailBehavior.ABORT in chosen
            else FailBehavior.DROP
            if chosen == {FailBehavior.DROP}
            else FailBehavior.QUARANTINE
        )
    whole = whole_dataset(dataset.load_type, dataset.transform.delete_missing)
    return FailBehavior.QUARANTINE if behavior == FailBehavior.DROP and whole else behavior


def droppable(rules: Iterable[CompiledRule], behavior: str) -> frozenset[str]:
    """The rules whose failing rows may be dropped: declared FAIL rules that judge single rows
    (the built-in malformed-row budget always blocks), and only under `drop`."""
    if behavior != FailBehavior.DROP:
        return frozenset()
    return frozenset(
        r.rule_id
        for r in rules
        if r.row_level and r.severity == "FAIL" and not r.rule_id.startswith("_")
    )
