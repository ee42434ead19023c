"""One problem found in a metadata document: where it is and what is wrong (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    loc: tuple[Any, ...]
    message: str

    @property
    def path(self) -> str:
        out = ""
        for part in self.loc:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out
