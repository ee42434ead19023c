"""No import cycle between any two modules: an import-linter contract type, and the finder the
architecture test uses.

import-linter's own contracts check layers and cycles among the children of one package; a
cycle between modules of two packages that share a layer passes both. This one looks at every
module of the root packages, with each module's imports wherever they are written (at the top,
in a function, under TYPE_CHECKING). `make lint` runs it (pyproject.toml names it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

import grimp
from importlinter.application import contract_utils, output
from importlinter.application.contract_utils import AlertLevel
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def import_map(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Each module of the graph and the modules it imports directly."""
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def module_cycles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle per group of modules that import each other, as the modules along it with
    the first one repeated at the end, sorted; empty when the graph has no cycle."""
    edges = {m: sorted(set(targets) & set(imports)) for m, targets in imports.items()}
    cycles = []
    for group in _strongly_connected(edges):
        start = min(group)
        cycles.append([start, *_path_back(edges, group, start)])
    return sorted(cycles)


def _strongly_connected(edges: Mapping[str, list[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative: the groups of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
    return groups


def _path_back(edges: Mapping[str, list[str]], group: set[str], start: str) -> list[str]:
    """The shortest way from `start` back to itself inside the group (breadth first)."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in edges[node]:
            if target not in group:
                continue
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path[:-1]), start]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    raise AssertionError(f"{start} is in a cycle it cannot get back from")


class AcyclicModulesContract(Contract):
    """No import cycle between any two modules of the root packages.

    Options: `ignore_imports` (import expressions left out of the graph, as in import-linter's
    own contracts) and `unmatched_ignore_imports_alerting` (none, warn, error).
    """

    type_name = "acyclic_modules"

    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)
    unmatched_ignore_imports_alerting = fields.EnumField(AlertLevel, default=AlertLevel.ERROR)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=self.unmatched_ignore_imports_alerting,  # type: ignore[arg-type]
        )
        cycles = module_cycles(import_map(graph))
        return ContractCheck(
            kept=not cycles,
            warnings=list(removal.warnings),
            ignored_import_count=removal.ignored_import_count,
            metadata={"cycles": cycles},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(" -> ".join(cycle))
            output.new_line()
        output.print(
            "Break each cycle: move the names both sides need into a module both import, or "
            "hand in what is needed (a parameter, a Protocol for a type) instead of importing it."
        )
