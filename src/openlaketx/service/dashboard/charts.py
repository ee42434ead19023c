"""Inline SVG charts, drawn on the server: a rule's failing share per batch with the share it
tolerates drawn across (no chart library, no script)."""

from __future__ import annotations

from dataclasses import dataclass

from openlaketx.service.insights import RuleTrend

WIDTH, HEIGHT, PAD = 420, 140, 28


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    outcome: str  # PASS, WARN or FAIL: the dot's class
    label: str  # its tooltip


@dataclass(frozen=True, slots=True)
class TrendChart:
    rule_id: str
    width: int
    height: int
    line: str  # the polyline's points
    dots: tuple[Dot, ...]
    threshold_y: float | None  # None: the rule is no longer defined
    threshold_label: str
    top_label: str  # the share at the top of the plot
    bottom_y: float
    left_x: float
    right_x: float


def trend_chart(trend: RuleTrend) -> TrendChart:
    """The plot of one rule: x = batches oldest to newest, y = failing share, scaled so the
    threshold and every point fit (at least 0..1%)."""
    shares = [p.failed_share for p in trend.points]
    top = max([*shares, trend.threshold or 0.0, 0.01]) * 1.15
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / max(len(shares) - 1, 1)

    def y_of(share: float) -> float:
        return round(PAD + inner_h * (1 - share / top), 1)

    dots = tuple(
        Dot(
            x=round(PAD + i * step, 1),
            y=y_of(p.failed_share),
            outcome=p.outcome,
            label=f"{p.evaluated_at:%Y-%m-%d %H:%M:%S} {p.failed_rows}/{p.rows_evaluated} "
            f"failing ({p.failed_share:.1%}) {p.outcome}",
        )
        for i, p in enumerate(trend.points)
    )
    return TrendChart(
        rule_id=trend.rule_id,
        width=WIDTH,
        height=HEIGHT,
        line=" ".join(f"{d.x},{d.y}" for d in dots),
        dots=dots,
        threshold_y=None if trend.threshold is None else y_of(trend.threshold),
        threshold_label="" if trend.threshold is None else f"threshold {trend.threshold:.1%}",
        top_label=f"{top:.1%}",
        bottom_y=PAD + inner_h,
        left_x=PAD,
        right_x=WIDTH - PAD,
    )
