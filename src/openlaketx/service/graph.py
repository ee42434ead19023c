"""A tenant's lineage as a graph: source objects -> datasets -> models, each node with its
columns where the definitions tell (lakeguard.rules.policy.lineage), each column with the columns it
reads and whether it carries a pii value unmasked (lakeguard.rules.policy.pii)."""

from __future__ import annotations

from dataclasses import dataclass

from lakeguard.reads.registry import Registry
from lakeguard.rules.policy.lineage import ColumnRef, Derivation, dataset_columns
from lakeguard.rules.policy.pii import Shape
from openlaketx.runner.policies import registered_raw_pii


@dataclass(frozen=True)
class ColumnRead:
    node: str
    column: str


@dataclass(frozen=True)
class LineageColumn:
    name: str
    reads: list[ColumnRead]
    pii: bool  # a pii-tagged value, unmasked
    data_type: str | None = None


@dataclass(frozen=True)
class LineageNode:
    id: str  # source:<source object id> or dataset:<dataset id>
    kind: str  # source, dataset or model (a SQL model)
    name: str
    layer: str | None
    detail: str  # a source's system and locator; a dataset's table
    columns: list[LineageColumn] | None  # None: not known from the definitions


@dataclass(frozen=True)
class LineageEdge:
    source: str
    target: str


@dataclass(frozen=True)
class LineageGraph:
    nodes: list[LineageNode]
    edges: list[LineageEdge]


def _node_of(ref: ColumnRef) -> ColumnRead:
    node = ref.dataset if ref.dataset.startswith("source:") else f"dataset:{ref.dataset}"
    return ColumnRead(node, ref.column)


def lineage_graph(registry: Registry) -> LineageGraph:
    """The graph of a registry's active definitions."""
    nodes: list[LineageNode] = []
    edges: list[LineageEdge] = []
    sourced: dict[str, Derivation] = {}
    for obj in sorted(registry.objects, key=lambda o: o.source_object_id):
        node = f"source:{obj.source_object_id}"
        columns = sorted(obj.columns, key=lambda c: c.ordinal)
        nodes.append(
            LineageNode(
                id=node,
                kind="source",
                name=obj.source_object_id,
                layer=None,
                detail=f"{obj.source_system_id}: {obj.locator} ({obj.format})",
                columns=[LineageColumn(c.column_name, [], c.is_pii, c.data_type) for c in columns]
                or None,
            )
        )
        edges.append(LineageEdge(node, f"dataset:{obj.dataset_id}"))
        into = sourced.setdefault(obj.dataset_id, {})
        for c in columns:
            into.setdefault(c.column_name, []).append(ColumnRef(node, c.column_name))
    shapes = {
        d.dataset_id: Shape(d.dataset_id, d.parents, d.transform.columns, d.transform.sql)
        for d in registry.datasets.values()
    }
    derived = dataset_columns(shapes, sourced)
    raw = registered_raw_pii(registry)
    for dataset in sorted(registry.datasets.values(), key=lambda d: d.dataset_id):
        node = f"dataset:{dataset.dataset_id}"
        found = derived.get(dataset.dataset_id)
        pii = raw.get(dataset.dataset_id, set())
        nodes.append(
            LineageNode(
                id=node,
                kind="model" if dataset.transform.sql else "dataset",
                name=dataset.dataset_id,
                layer=str(dataset.layer),
                detail=dataset.table_name,
                columns=None
                if found is None
                else [
                    LineageColumn(name, [_node_of(r) for r in reads], name.lower() in pii)
                    for name, reads in found.items()
                ],
            )
        )
        edges += [LineageEdge(f"dataset:{p}", node) for p in dataset.parents]
    return LineageGraph(nodes, edges)
