"""Where the next page of an `http` source's JSON API starts (a cursor, an offset, a page
number, or a URL the page names in its body or its Link header), when the pages stop, and how
a value is found in a JSON document by its dotted path.

The pages stop at the first of: a `has_more_path` that says false; a `total_path` count the
read has reached; no next cursor or URL (or one seen before); for offset and page numbers, an
empty page or, unless has_more or total says more follow, a short one: fewer than `size` with
a `size_param`, else fewer than the longest page before it (the server's own page size). Only
a full last page with neither has_more nor total costs one more (empty) request.
"""

from __future__ import annotations

from urllib.parse import urljoin

from pydantic import JsonValue

from lakeguard.records.sources.kinds.http import Paging


def dig(document: JsonValue, path: str) -> JsonValue:
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


def _flag(value: JsonValue) -> bool | None:
    """A has_more value: a JSON boolean, 0/1 or "true"/"false"; None when it is neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _count(value: JsonValue) -> int | None:
    """A total: a non-negative whole number (or its text); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


class PageState:
    """Where the next page starts, by the paging's style, and whether there is one."""

    def __init__(self, paging: Paging | None) -> None:
        self.paging = paging
        self.cursor: str | None = None
        self.offset = 0
        self.page = paging.start if paging else 0
        self.seen: set[str] = set()
        self.read = 0  # records so far
        self.longest = 0  # the longest page so far (the server's page size, when unsent)
        self.next_url: str | None = None  # next_url, link: the next page's absolute URL

    def params(self) -> dict[str, str]:
        """The paging's query parameters of the next request (next_url, link: the first)."""
        p = self.paging
        if p is None:
            return {}
        sized = {p.size_param: str(p.size)} if p.size_param else {}
        if p.style == "cursor":
            assert p.param is not None
            return {p.param: self.cursor} if self.cursor is not None else {}
        if p.style in ("next_url", "link"):
            return sized
        assert p.param is not None
        if p.style == "offset":
            return {p.param: str(self.offset), **sized}
        return {p.param: str(self.page), **sized}

    def advance(
        self,
        document: JsonValue,
        records: list[dict[str, JsonValue] | None],
        *,
        page_url: str = "",
        link: str | None = None,
    ) -> bool:
        """Move to the next page; False when this one was the last. `page_url`: the URL this
        page came from (a relative next URL is taken from it); `link`: its Link rel=next."""
        p = self.paging
        assert p is not None
        self.read += len(records)
        more = _flag(dig(document, p.has_more_path)) if p.has_more_path else None
        if more is False:
            return False
        total = _count(dig(document, p.total_path)) if p.total_path else None
        if total is not None and self.read >= total:
            return False
        known = more is True or total is not None  # the page says more follow
        if p.style == "cursor":
            assert p.cursor_path is not None
            nxt = dig(document, p.cursor_path)
            if nxt in (None, "") or str(nxt) in self.seen:
                return False
            self.cursor = str(nxt)
            self.seen.add(self.cursor)
            return True
        if p.style in ("next_url", "link"):
            named = dig(document, p.next_url_path) if p.next_url_path else link
            if not isinstance(named, str) or not named.strip():
                return False
            url = urljoin(page_url, named.strip())
            if url in self.seen:
                return False
            self.seen.add(url)
            self.next_url = url
            return True
        if not records:
            return False
        full = p.size if p.size_param else self.longest
        if not known and len(records) < full:
            return False
        self.longest = max(self.longest, len(records))
        self.offset += len(records)
        self.page += 1
        return True
