"""Tables and reports that stay readable wherever they are printed (pure: rendering only).

A `Tabular` is a rich table on a terminal wide enough for it: short values (ids, numbers,
statuses) each on one line, free text wrapped over at most `MAX_LINES` lines. Anywhere else (a
pipe, a log file, a terminal too narrow) it is plain aligned columns: one line per row with
every short value whole, and each long text on a line of its own under its row. Neither cuts,
folds nor shortens an id. A `Report` is a titled panel of text and tables on a terminal that
fits them, and the same parts one after the other, unboxed, anywhere else.

Plain lines are as long as their values: print them with a console that does not crop
(`Console(soft_wrap=True)`, as the CLI does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult

MAX_LINES = 3  # a rich table whose free text would need more lines per cell is printed plain
LONG = 40  # in plain columns, free text wider than this goes under its row
GAP = "  "
PANEL_EDGES = 4  # a panel's borders and padding


@dataclass(frozen=True)
class Column:
    name: str
    text: bool = False  # free text: it may wrap on a terminal, and goes under its row if long
    justify: JustifyMethod = "left"


def _width(text: Text) -> int:
    return max((Text(line).cell_len for line in text.plain.splitlines()), default=0)


class Tabular:
    """Rows of cells under named columns; rich or plain depending on where it is printed."""

    def __init__(
        self,
        columns: Sequence[Column],
        rows: Iterable[Sequence[Text | str]],
        *,
        title: Text | str = "",
    ) -> None:
        self.columns = list(columns)
        self.rows = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
        self.title = title if isinstance(title, Text) else Text(title)
        self.natural = [
            max([len(col.name), *(_width(row[i]) for row in self.rows)])
            for i, col in enumerate(self.columns)
        ]

    # -- on a terminal: a rich table, if it fits ----------------------------------------
    def layout(self, console: Console, max_width: int) -> list[int] | None:
        """Each column's width in a rich table `max_width` wide, or None when it does not fit
        with short values on one line and free text over at most MAX_LINES lines."""
        room = max_width - (3 * len(self.columns) + 1)  # borders and padding
        widths = list(self.natural)
        if sum(widths) <= room:
            return widths
        wrapping = [i for i, col in enumerate(self.columns) if col.text]
        for i in wrapping:
            widths[i] = self._narrowest(console, i)
        spare = room - sum(widths)
        if spare < 0:
            return None
        while spare > 0:  # what is left goes to the free text, one character at a time
            grown = [i for i in wrapping if widths[i] < self.natural[i]]
            if not grown:
                break
            for i in grown[:spare]:
                widths[i] += 1
            spare -= min(spare, len(grown))
        return widths

    def _narrowest(self, console: Console, i: int) -> int:
        """The narrowest width at which every cell of column `i` takes MAX_LINES or fewer."""
        cells = [Text(self.columns[i].name), *(row[i] for row in self.rows)]

        def fits(width: int) -> bool:
            return all(len(c.wrap(console, width, overflow="fold")) <= MAX_LINES for c in cells)

        low, high = max(1, ceil(self.natural[i] / MAX_LINES)), self.natural[i]
        while low < high:
            middle = (low + high) // 2
            if fits(middle):
                high = middle
            else:
                low = middle + 1
        return high

    def rich_table(self, widths: list[int]) -> Table:
        table = Table(title=self.title or None)
        for col, width in zip(self.columns, widths, strict=True):
            table.add_column(
                col.name, justify=col.justify, width=width, no_wrap=not col.text, overflow="fold"
            )
        for row in self.rows:
            table.add_row(*row)
        return table

    # -- anywhere else: plain aligned columns --------------------------------------------
    def plain_lines(self) -> list[Text]:
        """The title, a header, then one line per row; long free text under its row."""
        flat = [
            max([len(col.name), *(_one_line(row[i]).cell_len for row in self.rows)])
            for i, col in enumerate(self.columns)
        ]
        under = [i for i, c in enumerate(self.columns) if c.text and flat[i] > LONG]
        inline = [(i, flat[i]) for i in range(len(self.columns)) if i not in under]
        lines = [self.title.copy()] if self.title else []
        lines.append(self._aligned(inline, [Text(c.name, style="bold") for c in self.columns]))
        for row in self.rows:
            lines.append(self._aligned(inline, row))
            lines += [
                Text(f"{GAP}{self.columns[i].name}: ") + _one_line(row[i])
                for i in under
                if row[i].plain
            ]
        return lines

    def _aligned(self, inline: list[tuple[int, int]], cells: Sequence[Text]) -> Text:
        """The cells of the `inline` (column, width) pairs, aligned on one line."""
        line = Text()
        for n, (i, width) in enumerate(inline):
            value = _one_line(cells[i])
            pad = " " * (width - value.cell_len)
            right = self.columns[i].justify == "right"
            line.append_text(Text(GAP if n else "") + (Text(pad) + value if right else value))
            if not right:
                line.append(pad)
        line.rstrip()
        return line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.layout(console, options.max_width) if console.is_terminal else None
        if widths is not None:
            yield self.rich_table(widths)
            return
        for line in self.plain_lines():
            line.no_wrap, line.overflow = True, "ignore"
            yield line


def _one_line(text: Text) -> Text:
    """The text on one line (a value's line breaks become spaces)."""
    if "\n" not in text.plain:
        return text
    flat = text.copy()
    flat.plain = text.plain.replace("\n", " ")
    return flat


class Report:
    """Text and tables under a title: a panel on a terminal where every table fits in it,
    else the title and the parts one after the other, unboxed (each table rich or plain)."""

    def __init__(self, title: str, parts: Sequence[Text | Tabular]) -> None:
        self.title = title
        self.parts = list(parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        inner = options.max_width - PANEL_EDGES
        tables = [p for p in self.parts if isinstance(p, Tabular)]
        if console.is_terminal and all(t.layout(console, inner) is not None for t in tables):
            boxed = [_wrapping(p) if isinstance(p, Text) else p for p in self.parts]
            yield Panel(Group(*boxed), title=self.title)
            return
        yield Text(self.title, style="bold", no_wrap=True, overflow="ignore")
        for part in self.parts:
            if isinstance(part, Text):
                for line in part.split("\n"):
                    line.no_wrap, line.overflow = True, "ignore"
                    yield line
            else:
                yield Text("")  # a blank line above each table's title
                yield part


def _wrapping(text: Text) -> Text:
    """Text that wraps at word boundaries inside a panel, whatever the console's default."""
    wrapped = text.copy()
    wrapped.no_wrap, wrapped.overflow = False, "fold"
    return wrapped
