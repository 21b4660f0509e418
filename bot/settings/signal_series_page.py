"""The review signal over time on the settings pages (bot/review/signal_series.py): one small
server-rendered SVG per agent (no script), a bar per week for the findings posted that week,
split into fixed, declined and still open, and a line for the share acted on (fixed ÷ posted).
Agent names come from the adapters' registry; every value still goes through `esc`.
"""
from __future__ import annotations

import time

from bot.review.signal_series import Week
from bot.settings.pages import esc

WIDTH, HEIGHT = 360, 140
LEFT, RIGHT, TOP, BOTTOM = 38, 352, 10, 110  # the plot area
PARTS = (("fixed", "#1a7f37"), ("declined", "#8c959f"), ("open", "#bf8700"))
LINE = "#0969da"


def series_section(series: dict[str, list[Week]]) -> str:
    body = ("<h3>Over time</h3><p>Per week, the findings each agent posted that week and what has become of "
            "them since; the line is the share acted on (fixed ÷ posted).</p>")
    if not series:
        return body + '<p class="muted">No findings posted in the last weeks.</p>'
    most = max((w.posted for weeks in series.values() for w in weeks), default=0) or 1
    legend = "".join(f'<span style="color:{colour}">■</span> {name} ' for name, colour in PARTS)
    return (body + "".join(_chart(agent, weeks, most) for agent, weeks in series.items())
            + f'<p class="muted">{legend}<span style="color:{LINE}">—</span> share acted on. '
            f"The tallest bar is {most} findings.</p>")


def _chart(agent: str, weeks: list[Week], most: int) -> str:
    slot = (RIGHT - LEFT) / len(weeks)
    parts = [_axes(weeks)]
    parts += [_bar(week, LEFT + i * slot + slot * 0.2, slot * 0.6, most) for i, week in enumerate(weeks)]
    points = [(LEFT + i * slot + slot / 2, week) for i, week in enumerate(weeks) if week.acted_on is not None]
    if len(points) > 1:
        path = " ".join(f"{x:.1f},{_y(w.acted_on or 0):.1f}" for x, w in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{LINE}" stroke-width="2"/>')
    parts += [f'<circle cx="{x:.1f}" cy="{_y(w.acted_on or 0):.1f}" r="3" fill="{LINE}"><title>Week of {w.label}: '
              f"{_share(w.acted_on)} acted on</title></circle>" for x, w in points]
    summary = _summary(agent, weeks)
    return (f"<figure><figcaption>{esc(summary)}</figcaption>"
            f'<svg role="img" aria-label="{esc(summary)}" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
            f'style="max-width:{WIDTH}px;font:11px system-ui" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}'
            "</svg></figure>")


def _axes(weeks: list[Week]) -> str:
    lines = "".join(f'<line x1="{LEFT}" x2="{RIGHT}" y1="{_y(share)}" y2="{_y(share)}" stroke="#d0d7de" '
                    f'stroke-dasharray="{"" if share == 0 else "2,3"}"/>'
                    f'<text x="{LEFT - 4}" y="{_y(share) + 4}" text-anchor="end">{share:.0%}</text>'
                    for share in (0, 0.5, 1))
    return (lines + f'<text x="{LEFT}" y="{HEIGHT - 14}">{_day(weeks[0])}</text>'
            f'<text x="{RIGHT}" y="{HEIGHT - 14}" text-anchor="end">{_day(weeks[-1])}</text>')


def _bar(week: Week, x: float, width: float, most: int) -> str:
    y, rects = float(BOTTOM), []
    for name, colour in PARTS:
        height = (BOTTOM - TOP) * getattr(week, name) / most
        if height:
            y -= height
            rects.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{colour}"/>')
    title = (f"Week of {week.label}: {week.posted} posted, {week.fixed} fixed, {week.declined} declined, "
             f"{week.open} open; {_share(week.acted_on)} acted on")
    return f"<g><title>{title}</title>{''.join(rects)}</g>" if rects else ""


def _summary(agent: str, weeks: list[Week]) -> str:
    shares = [w for w in weeks if w.acted_on is not None]
    if not shares:
        return f"{agent}: no findings posted in these weeks."
    first, last = shares[0], shares[-1]
    return (f"{agent}: share acted on {_share(first.acted_on)} in the week of {first.label}, "
            f"{_share(last.acted_on)} in the week of {last.label}; {sum(w.posted for w in weeks)} findings posted.")


def _y(share: float) -> float:
    return BOTTOM - (BOTTOM - TOP) * share


def _day(week: Week) -> str:
    return time.strftime("%d %b", time.gmtime(week.start)).lstrip("0")


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"
