"""Charts rendered on the server as SVG: no script, no library, no network (offline).

A chart has a fixed size (its ``viewBox``), so the page reserves its space before the data
arrives and a live update that replaces it moves nothing else. Colours are presentation
attributes, not inline CSS (the console's Content-Security-Policy allows no inline style).
Each line carries ``data-series`` and ``data-last`` (its name and latest value), which is what
an accessible reader (and the end-to-end test) reads besides the drawn line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from markupsafe import Markup, escape

from controller.console.pages.series import Series

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")
WIDTH = 640
LEGEND_ROWS = 3
HEIGHT = 220  # of a line chart's plot; with its legend, 220 + 3 x 16 + 8 = 276 (console.css)
FONT = 'font-family="sans-serif" font-size="11"'


@dataclass(frozen=True, slots=True)
class Bar:
    """A stacked bar: its label, its parts (name, value), a note after it."""

    label: str
    parts: tuple[tuple[str, Decimal], ...]
    note: str = ""
    key: str = ""


def _nice(top: Decimal) -> Decimal:
    """A round upper bound at or above ``top``."""
    if top <= 0:
        return Decimal(1)
    magnitude = Decimal(10) ** (len(str(int(top))) - 1)
    for step in (1, 2, 5, 10):
        bound = magnitude * step
        if bound >= top:
            return bound
    return magnitude * 10


def _fmt(value: Decimal) -> str:
    return f"{value.normalize():f}" if value == value.to_integral() else f"{value:.2f}"


def bar_chart(bars: Sequence[Bar], parts: Sequence[str], *, title: str, unit: str) -> Markup:
    """Horizontal stacked bars (one per candidate), with a legend of ``parts``."""
    row, left, right, top = 26, 170, 230, 34  # right: "84.45 ms  excluded: price-above-maximum"
    height = top + row * max(len(bars), 1) + 30
    totals = [sum((v for _, v in b.parts), Decimal(0)) for b in bars]
    scale = _nice(max(totals, default=Decimal(1)))
    span = WIDTH - left - right
    out = [_open(WIDTH, height, title)]
    for index, name in enumerate(parts):
        key_x = left + index * 130
        out.append(f'<rect x="{key_x}" y="8" width="12" height="12" fill="{PALETTE[index]}"/>')
        out.append(f'<text x="{key_x + 16}" y="18" {FONT}>{escape(name)} ({escape(unit)})</text>')
    for position, bar in enumerate(bars):
        y = top + position * row
        out.append(
            f'<text x="{left - 6}" y="{y + 15}" text-anchor="end" {FONT}>{escape(bar.label)}</text>'
        )
        x = Decimal(left)
        total = Decimal(0)
        out.append(f'<g data-candidate="{escape(bar.key or bar.label)}">')
        for name, value in bar.parts:
            width = Decimal(span) * value / scale
            colour = PALETTE[list(parts).index(name) % len(PALETTE)]
            out.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{width:.1f}" height="16" fill="{colour}" '
                f'data-part="{escape(name)}" data-value="{_fmt(value)}">'
                f"<title>{escape(name)} {_fmt(value)} {escape(unit)}</title></rect>"
            )
            x += width
            total += value
        note = f"{_fmt(total)} {unit}" + (f"  {bar.note}" if bar.note else "")
        if not bar.parts:
            note = bar.note
        out.append(f'<text x="{x + 6:.1f}" y="{y + 15}" {FONT}>{escape(note)}</text></g>')
    axis_y = top + row * max(len(bars), 1) + 4
    out.append(_line(left, axis_y, left + span, axis_y))
    for fraction in (Decimal(0), Decimal("0.5"), Decimal(1)):
        tick = left + span * fraction
        out.append(
            f'<text x="{tick:.1f}" y="{axis_y + 14}" text-anchor="middle" {FONT}>'
            f"{_fmt(scale * fraction)}</text>"
        )
    return Markup("".join(out) + "</svg>")


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}" '
        f'class="chart"><title>{escape(title)}</title>'
    )


def _line(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#888"/>'


def _clock(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%H:%M:%S")


def _path(series: Series, begin: float, end: float, scale: Decimal, box: tuple[int, ...]) -> str:
    """The SVG path of a step line (gaps where the value is unknown)."""
    left, top, span, height = box
    commands: list[str] = []
    previous: float | None = None
    points = [p for p in series.points if p[0] <= end]
    for index, (moment, value) in enumerate(points):
        following = points[index + 1][0] if index + 1 < len(points) else end
        if value is None:
            previous = None
            continue
        x1 = left + span * (max(moment, begin) - begin) / max(end - begin, 1e-9)
        x2 = left + span * (max(following, begin) - begin) / max(end - begin, 1e-9)
        y = top + height - float(Decimal(height) * min(value, scale) / scale)
        commands.append(f"{'L' if previous is not None else 'M'}{x1:.1f},{y:.1f} H{x2:.1f}")
        previous = y
    return " ".join(commands)


def line_chart(
    series: Sequence[Series], begin: float, end: float, *, title: str, unit: str
) -> Markup:
    """Step lines over ``[begin, end]`` (epoch s), one per series, with a legend."""
    left, right, top, bottom, height = 56, 12, 22, 24, HEIGHT
    total_height = height + LEGEND_ROWS * 16 + 8  # fixed: a new line moves nothing
    span, plot = WIDTH - left - right, height - top - bottom
    values = [v for s in series for _, v in s.points if v is not None]
    scale = _nice(max(values, default=Decimal(1)) * Decimal("1.1"))
    out = [_open(WIDTH, total_height, title)]
    for fraction in (Decimal(0), Decimal("0.25"), Decimal("0.5"), Decimal("0.75"), Decimal(1)):
        y = top + plot - float(plot * fraction)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + span}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        out.append(
            f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" {FONT}>'
            f"{_fmt(scale * fraction)}</text>"
        )
    out.append(f'<text x="4" y="10" {FONT}>{escape(unit)}</text>')
    for share, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        x = left + span * share
        moment = begin + (end - begin) * share
        out.append(
            f'<text x="{x:.1f}" y="{top + plot + 16}" text-anchor="{anchor}" {FONT}>'
            f"{_clock(moment)}</text>"
        )
    out.append(_line(left, top + plot, left + span, top + plot))
    for index, line in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        path = _path(line, begin, end, scale, (left, top, span, plot))
        last = "" if line.last is None else _fmt(line.last)
        out.append(
            f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2" '
            f'data-series="{escape(line.name)}" data-last="{last}"/>'
        )
        if index >= LEGEND_ROWS * 3:
            continue  # drawn, not named: the legend's space is fixed
        x = left + (index % 3) * 190
        y = height + 4 + (index // 3) * 16
        out.append(f'<rect x="{x}" y="{y}" width="12" height="4" fill="{colour}"/>')
        shown = f"{line.name}: {last or '-'} {unit}" if last else f"{line.name}: -"
        out.append(f'<text x="{x + 16}" y="{y + 6}" {FONT}>{escape(shown)}</text>')
    if not series:
        out.append(
            f'<text x="{left + span / 2}" y="{top + plot / 2}" text-anchor="middle" {FONT}>'
            "no data in this window</text>"
        )
    return Markup("".join(out) + "</svg>")
