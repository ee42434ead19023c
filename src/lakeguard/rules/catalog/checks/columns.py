"""The output columns of each dataset, as far as the document determines them: what the
checks of keys, rules and expressions hold the names they use against."""

from __future__ import annotations

from lakeguard.rules.catalog.models import Dataset, Layer, MetadataDocument
from lakeguard.rules.catalog.sql_models import check_model, model_parents
from lakeguard.words.vocabulary import SCD2_COLUMNS, LoadType


def dataset_columns(doc: MetadataDocument) -> dict[str, list[str] | None]:
    """Output columns of each dataset, where the document determines them (None: unknown)."""
    by_id = {d.id: d for d in doc.datasets}
    result: dict[str, list[str] | None] = {}

    def columns_of(ds: Dataset, seen: frozenset[str]) -> list[str] | None:
        if ds.id in result:
            return result[ds.id]
        found = _own_columns(ds, seen)
        if found is not None and ds.effective_load_type == LoadType.SCD2:
            found = [*found, *SCD2_COLUMNS]
        return found

    def _own_columns(ds: Dataset, seen: frozenset[str]) -> list[str] | None:
        if ds.sql is not None:
            parents = model_parents(ds, by_id)
            if any(p in seen or p not in by_id for p in parents):
                return None
            inputs = {p: columns_of(by_id[p], seen | {ds.id}) for p in parents}
            return check_model(ds, by_id, inputs)[1]
        if ds.columns is not None:
            return list(ds.columns)
        if ds.layer is Layer.BRONZE:
            cols: list[str] = []
            for obj in doc.source_objects:
                if obj.dataset == ds.id:
                    cols += [c.name for c in obj.columns if c.name not in cols]
            return cols or None
        if len(ds.parents) == 1 and ds.parents[0] in by_id and ds.parents[0] not in seen:
            return columns_of(by_id[ds.parents[0]], seen | {ds.id})
        return None

    for ds in doc.datasets:
        result[ds.id] = columns_of(ds, frozenset())
    return result
