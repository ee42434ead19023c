"""The lineage graph laid out for an SVG: one column per stage (sources, bronze, silver, gold,
then anything else), nodes stacked in each, optionally cut to the nodes within some depth up-
and downstream of one focused node."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from openlaketx.service.graph import LineageGraph, LineageNode

STAGES = ("source", "bronze", "silver", "gold")
NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 190, 46, 70, 18, 12


@dataclass(frozen=True, slots=True)
class PlacedNode:
    node: LineageNode
    x: int
    y: int
    outcome: str | None  # the dataset's last outcome (PROMOTED, HELD, FAILED), None: none yet
    trust: int | None
    focused: bool


@dataclass(frozen=True, slots=True)
class PlacedEdge:
    path: str  # an SVG path from the source's right side to the target's left side


@dataclass(frozen=True, slots=True)
class Layout:
    width: int
    height: int
    nodes: tuple[PlacedNode, ...]
    edges: tuple[PlacedEdge, ...]


def within(graph: LineageGraph, focus: str, depth: int) -> set[str]:
    """The nodes at most `depth` edges up- or downstream of `focus` (following one direction
    at a time, so siblings through a shared parent are not pulled in)."""
    down: dict[str, list[str]] = {}
    up: dict[str, list[str]] = {}
    for e in graph.edges:
        down.setdefault(e.source, []).append(e.target)
        up.setdefault(e.target, []).append(e.source)
    keep = {focus}
    for links in (down, up):
        queue = deque([(focus, 0)])
        while queue:
            node, far = queue.popleft()
            if far == depth:
                continue
            for nxt in links.get(node, []):
                if nxt not in keep:
                    keep.add(nxt)
                    queue.append((nxt, far + 1))
    return keep


def layout(
    graph: LineageGraph,
    outcomes: dict[str, str | None],
    trust: dict[str, int | None],
    keep: set[str] | None = None,
    focus: str | None = None,
) -> Layout:
    """Place `graph`'s nodes (those in `keep`, all when None); `outcomes` and `trust` are by
    dataset id."""
    nodes = [n for n in graph.nodes if keep is None or n.id in keep]
    columns: dict[int, list[LineageNode]] = {}
    for node in nodes:
        stage = "source" if node.kind == "source" else (node.layer or "")
        rank = STAGES.index(stage) if stage in STAGES else len(STAGES)
        columns.setdefault(rank, []).append(node)
    ranks = sorted(columns)
    placed: dict[str, PlacedNode] = {}
    for i, rank in enumerate(ranks):
        for j, node in enumerate(sorted(columns[rank], key=lambda n: n.name)):
            placed[node.id] = PlacedNode(
                node=node,
                x=PAD + i * (NODE_W + GAP_X),
                y=PAD + j * (NODE_H + GAP_Y),
                outcome=outcomes.get(node.name) if node.kind != "source" else None,
                trust=trust.get(node.name) if node.kind != "source" else None,
                focused=node.id == focus,
            )
    edges = []
    for e in graph.edges:
        a, b = placed.get(e.source), placed.get(e.target)
        if a is None or b is None:
            continue
        x1, y1 = a.x + NODE_W, a.y + NODE_H // 2
        x2, y2 = b.x, b.y + NODE_H // 2
        mid = (x1 + x2) // 2
        edges.append(PlacedEdge(path=f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"))
    tallest = max((len(c) for c in columns.values()), default=0)
    return Layout(
        width=2 * PAD + max(len(ranks), 1) * (NODE_W + GAP_X) - GAP_X,
        height=2 * PAD + max(tallest, 1) * (NODE_H + GAP_Y) - GAP_Y,
        nodes=tuple(placed.values()),
        edges=tuple(edges),
    )
