"""Checks of the policies: their expressions parse, and the lineage lets no raw PII column
reach a layer a blocking PII policy guards."""

from __future__ import annotations

from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.catalog.sql_models import model_parents
from lakeguard.rules.policy.expression import DEFAULTS, parse
from lakeguard.rules.policy.pii import Shape, raw_pii
from lakeguard.words.errors import LakeTxError
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import Enforcement


def check_policies(doc: MetadataDocument) -> list[Problem]:
    """Policy expressions parse; PII-blocking policies are met by the document's lineage."""
    problems: list[Problem] = []
    for i, policy in enumerate(doc.policies):
        try:
            parse(policy.expression or DEFAULTS[policy.type], policy.type, where="")
        except LakeTxError as exc:
            problems.append(Problem(("policies", i, "expression"), exc.what))
    guarded = {
        layer
        for p in doc.policies
        if p.type == "PII" and p.enforcement == Enforcement.BLOCK
        for layer in p.applies_to
    }
    if not guarded:
        return problems
    ids = {d.id for d in doc.datasets}
    shapes = {
        d.id: Shape(d.id, tuple(model_parents(d, ids)), d.columns, d.sql) for d in doc.datasets
    }
    tagged: dict[str, set[str]] = {}
    for obj in doc.source_objects:
        tagged.setdefault(obj.dataset, set()).update(c.name.lower() for c in obj.columns if c.pii)
    raw = raw_pii(shapes, tagged)
    for i, ds in enumerate(doc.datasets):
        if ds.layer in guarded and raw.get(ds.id):
            field = "sql" if ds.sql else "columns" if ds.columns is not None else "parents"
            problems.append(
                Problem(
                    ("datasets", i, field),
                    f"pii column(s) {', '.join(sorted(raw[ds.id]))} reach {ds.layer.value} "
                    "raw; a PII policy blocks that: mask them (sha2(col, 256), md5, mask, ...) "
                    "or drop them",
                )
            )
    return problems
