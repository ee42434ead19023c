"""Where the next page of an `http` source's JSON API starts (cursor, offset or page number)
and how a value is found in a JSON document by its dotted path."""

from __future__ import annotations

from typing import Any

from lakeguard.source_kinds.http import Paging


def dig(document: Any, path: str) -> Any:
    """The value at a dotted path of a JSON document ('.' or '': the document itself)."""
    if path in ("", "."):
        return document
    found = document
    for part in path.split("."):
        if isinstance(found, dict) and part in found:
            found = found[part]
        elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
            found = found[int(part)]
        else:
            return None
    return found


class PageState:
    """Where the next page starts, by the paging's style."""

    def __init__(self, paging: Paging | None) -> None:
        self.paging = paging
        self.cursor: str | None = None
        self.offset = 0
        self.page = paging.start if paging else 0
        self.seen: set[str] = set()

    def params(self) -> dict[str, str]:
        p = self.paging
        if p is None:
            return {}
        sized = {p.size_param: str(p.size)} if p.size_param else {}
        if p.style == "cursor":
            return {p.param: self.cursor} if self.cursor is not None else {}
        if p.style == "offset":
            return {p.param: str(self.offset), **sized}
        return {p.param: str(self.page), **sized}

    def advance(self, document: Any, records: list[dict[str, Any]]) -> bool:
        """Move to the next page; False when this one was the last."""
        p = self.paging
        assert p is not None
        if p.style == "cursor":
            assert p.cursor_path is not None
            nxt = dig(document, p.cursor_path)
            if nxt in (None, "") or str(nxt) in self.seen:
                return False
            self.cursor = str(nxt)
            self.seen.add(self.cursor)
            return True
        if not records or (p.size_param and len(records) < p.size):
            return False
        self.offset += len(records)
        self.page += 1
        return True
