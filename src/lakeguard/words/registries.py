"""The check every kind registry makes when it loads (pure): a kind module left out of the
registry is an error, so a new kind cannot be half added."""

from __future__ import annotations

import pkgutil
from collections.abc import Iterable


def unregistered(package_path: Iterable[str], registered: Iterable[object]) -> list[str]:
    """Modules of a kinds package (all but `base`) that define no registered kind."""
    modules = {name for _, name, _ in pkgutil.iter_modules(package_path) if name != "base"}
    found = {type(k).__module__ if not isinstance(k, type) else k.__module__ for k in registered}
    return sorted(modules - {m.rsplit(".", 1)[-1] for m in found})


def refuse_incomplete(kind: str, problems: list[str], where: str) -> None:
    if problems:
        raise RuntimeError(
            f"the {kind} registry is incomplete: " + "; ".join(problems) + f" (fix: {where})"
        )
