"""A database over JDBC: the table as a snapshot, or its rows above a watermark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from lakeguard.catalog.problems import Problem
from lakeguard.catalog.source_kinds.base import SourceKind
from lakeguard.schema.types import is_numeric, is_watermark_type
from lakeguard.vocabulary import SourceLoad

if TYPE_CHECKING:
    from lakeguard.catalog.models import SourceObject, SourceSystem


class JdbcKind(SourceKind):
    name: ClassVar[str] = "jdbc"
    formats: ClassVar[tuple[str, ...]] = ("jdbc",)
    default_load: ClassVar[SourceLoad] = SourceLoad.FULL
    watermarks: ClassVar[bool] = True
    partitioned_reads: ClassVar[bool] = True

    def check_system(self, system: SourceSystem, loc: tuple[Any, ...]) -> list[Problem]:
        url = system.options.get("url", "")
        problems = []
        if not url.startswith("jdbc:"):
            problems.append(Problem((*loc, "options", "url"), "a jdbc system needs a jdbc: url"))
        if "password=" in url.lower():
            problems.append(
                Problem((*loc, "options", "url"), "the url carries a password; use credential_ref")
            )
        return problems

    def check_object(self, obj: SourceObject, loc: tuple[Any, ...], siblings: int) -> list[Problem]:
        types = {c.name: c.type for c in obj.columns}
        problems: list[Problem] = []
        if (obj.load_type or self.default_load) == SourceLoad.INCREMENTAL:
            problems += _watermark_problems(obj, loc, types)
            if siblings > 1:
                problems.append(
                    Problem(
                        loc, "an incremental source must be the only source object of its dataset"
                    )
                )
        if obj.partition_column is not None:
            if not is_numeric(types.get(obj.partition_column, "string")):
                problems.append(
                    Problem((*loc, "partition_column"), "must be a declared numeric column")
                )
            elif obj.lower_bound is None or obj.upper_bound is None or obj.num_partitions is None:
                problems.append(
                    Problem(
                        (*loc, "partition_column"),
                        "needs lower_bound, upper_bound and num_partitions",
                    )
                )
        return problems


def _watermark_problems(
    obj: SourceObject, loc: tuple[Any, ...], types: dict[str, str]
) -> list[Problem]:
    wm = obj.watermark_column
    if wm is None:
        return [
            Problem(
                (*loc, "watermark_column"), "an incremental JDBC source needs a watermark_column"
            )
        ]
    if wm not in types:
        return [Problem((*loc, "watermark_column"), f"{wm!r} is not a declared column")]
    if not is_watermark_type(types[wm]):
        return [
            Problem(
                (*loc, "watermark_column"),
                f"{wm!r} is {types[wm]}; a watermark must be numeric, a date or a timestamp",
            )
        ]
    if obj.lookback is not None:
        temporal = types[wm] in ("date", "timestamp")
        if temporal != isinstance(obj.lookback, str):
            want = "a duration such as '2 hours'" if temporal else "a number"
            return [Problem((*loc, "lookback"), f"a {types[wm]} watermark's lookback is {want}")]
    return []
