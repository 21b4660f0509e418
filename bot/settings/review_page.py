"""The review parts of a repository's settings page: the learned rule candidates a maintainer
approves, edits or discards (bot/review/learned.py), the approved rules with the pull request that
adds each to REVIEW.md (or why it failed, and a button to try again), and each agent's signal as a
table and a server-rendered SVG chart (bot/review/signal.py). Every interpolated value goes through
`esc`: a candidate's wording and evidence are agents' and contributors' text.
"""
from __future__ import annotations

from bot.review.learned import CANDIDATE, CLOSED, MERGED, Learned
from bot.review.learned_pull import up_to_date
from bot.review.signal import AgentSignal
from bot.review.signal_series import Week
from bot.settings.pages import csrf_field, esc
from bot.settings.signal_series_page import series_section

BAR_WIDTH, ROW_HEIGHT, LABEL_WIDTH = 300, 28, 90
PARTS = (("fixed", "#1a7f37"), ("declined", "#8c959f"), ("open", "#bf8700"))


def learned_section(rules: list[Learned], base: str, csrf: str, github_web: str, repo: str) -> str:
    candidates = [r for r in rules if r.state == CANDIDATE]
    approved = [r for r in rules if r.state != CANDIDATE]
    body = ("<h2>Learned review rules</h2><p>Kinds of finding writers declined on two or more pull requests. "
            "Nothing here applies until a maintainer approves it; an approved rule is sent to every agent and the "
            "bot withholds a finding it covers.</p>")
    if not rules:
        return body + '<p class="muted">No candidates yet.</p>'
    body += "".join(_candidate(r, base, csrf, github_web, repo) for r in candidates)
    if approved:
        rows = "".join(f'<tr><td data-label="Rule">{esc(r.wording)}{_edit(r, base, csrf)}</td>'
                       f'<td data-label="Folder"><code>{esc(_where(r.folder))}</code></td>'
                       f'<td data-label="Approved by">{esc(r.decided_by or "")}</td>'
                       f'<td data-label="Pull request">{_pull_request(r, base, csrf)}</td></tr>' for r in approved)
        body += ("<table><caption>Approved learned rules</caption><thead><tr><th scope=col>Rule</th>"
                 "<th scope=col>Folder</th><th scope=col>Approved by</th><th scope=col>Pull request</th></tr>"
                 f"</thead><tbody>{rows}</tbody></table>")
    return body


def _edit(rule: Learned, base: str, csrf: str) -> str:
    """An approved rule's wording and folder, edited: its pull request follows (updated while open,
    a new one once merged or closed)."""
    return (f'<details><summary>Edit</summary><form method="post" action="{esc(base)}/learned">{csrf_field(csrf)}'
            f'<input type="hidden" name="id" value="{rule.id}">'
            f'<label for="wording-{rule.id}">Rule</label>'
            f'<input id="wording-{rule.id}" name="wording" value="{esc(rule.wording)}" maxlength="500">'
            f'<label for="folder-{rule.id}">Folder (empty: the whole repository)</label>'
            f'<input id="folder-{rule.id}" name="folder" value="{esc(rule.folder)}" maxlength="200">'
            '<p><button type="submit" name="action" value="approve">Save</button> '
            '<button class="danger" type="submit" name="action" value="discard">Discard</button></p>'
            "</form></details>")


def _pull_request(rule: Learned, base: str, csrf: str) -> str:
    """The pull request adding the rule to REVIEW.md, as GitHub last said it was; while it does not
    hold the rule as it is now (not opened, closed unmerged, an edit not written), why, and a button
    to try again."""
    link = ""
    if rule.pull_request and rule.pull_request.startswith(("https://", "http://")):
        label = f"#{rule.pull_request_number}" if rule.pull_request_number else "Pull request"
        link = f'<a href="{esc(rule.pull_request)}" rel="noreferrer">{esc(label)}</a>'
    if up_to_date(rule):
        return link + (" merged" if rule.pull_request_state == MERGED else "")
    if rule.pull_request_state == CLOSED:
        why = (f"{link} was closed without merging. The rule still applies to reviews; try again to open a new "
               "pull request, or discard the rule.")
    elif rule.recorded:
        why = f"{link} does not hold the edit yet. " + esc(rule.pull_request_failure or "")
    else:
        why = esc(rule.pull_request_failure or "Not opened yet (the bot stopped before it, or is opening it now).")
    return (f'<p>{why}</p><form method="post" action="{esc(base)}/learned/pull-request">{csrf_field(csrf)}'
            f'<input type="hidden" name="id" value="{rule.id}">'
            '<button type="submit">Try again</button></form>')


def _candidate(rule: Learned, base: str, csrf: str, github_web: str, repo: str) -> str:
    links = "".join(f'<li><a href="{esc(_thread_url(github_web, repo, e.number, e.comment_id))}" '
                    f'rel="noreferrer">#{e.number}</a>: {esc(e.title)}</li>' for e in rule.evidence)
    return (f'<form method="post" action="{esc(base)}/learned"><fieldset><legend>Candidate {rule.id}</legend>'
            f'{csrf_field(csrf)}<input type="hidden" name="id" value="{rule.id}">'
            f'<p>Declined by writers on these threads:</p><ul>{links}</ul>'
            f'<label for="wording-{rule.id}">Rule</label>'
            f'<input id="wording-{rule.id}" name="wording" value="{esc(rule.wording)}" maxlength="500">'
            f'<label for="folder-{rule.id}">Folder (empty: the whole repository)</label>'
            f'<input id="folder-{rule.id}" name="folder" value="{esc(rule.folder)}" maxlength="200">'
            '<p><button type="submit" name="action" value="approve">Approve</button> '
            '<button class="danger" type="submit" name="action" value="discard">Discard</button></p>'
            "</fieldset></form>")


def _thread_url(github_web: str, repo: str, number: int, comment_id: int | None) -> str:
    url = f"{github_web}/{repo}/pull/{number}"
    return url + (f"#discussion_r{comment_id}" if comment_id else "")


def _where(folder: str) -> str:
    return f"{folder}/" if folder else "(whole repository)"


def signal_section(rows: list[AgentSignal], series: dict[str, list[Week]]) -> str:
    body = ("<h2>Review signal per agent</h2><p>Inline findings each agent posted here and what became of them: "
            "fixed, declined by a writer, or still open; the share acted on is fixed ÷ posted.</p>")
    if not rows:
        return body + '<p class="muted">No reviews yet.</p>'
    return body + signal_table(rows) + signal_chart(rows) + series_section(series)


def signal_link(base: str) -> str:
    return (f'<p><a href="{esc(base)}/signal">The review signal alone</a>: a page the repository\'s writers '
            "can open too.</p>")


def signal_table(rows: list[AgentSignal]) -> str:
    cells = "".join(
        f'<tr><td data-label="Agent">{esc(r.agent)}</td><td data-label="Reviews">{r.reviews}</td>'
        f'<td data-label="Posted">{r.posted}</td><td data-label="Fixed">{r.fixed}</td>'
        f'<td data-label="Declined">{r.declined}</td><td data-label="Open">{r.open}</td>'
        f'<td data-label="Reactions">{r.thumbs_up} up, {r.thumbs_down} down</td>'
        f'<td data-label="Acted on">{_share(r.acted_on)}</td>'
        f'<td data-label="Cost per review">{_usd(r.cost_per_review)}</td></tr>' for r in rows)
    heads = "".join(f"<th scope=col>{h}</th>" for h in ("Agent", "Reviews", "Posted", "Fixed", "Declined", "Open",
                                                        "Reactions", "Acted on", "Cost per review"))
    return (f'<table class="signal"><caption>Signal per agent</caption><thead><tr>{heads}</tr></thead>'
            f"<tbody>{cells}</tbody></table>")


def signal_chart(rows: list[AgentSignal]) -> str:
    """One bar per agent, its length the findings posted, split into fixed, declined and open."""
    most = max((r.posted for r in rows), default=0) or 1
    height = ROW_HEIGHT * len(rows) + 24
    bars = []
    for i, row in enumerate(rows):
        y, x = i * ROW_HEIGHT, LABEL_WIDTH
        bars.append(f'<text x="0" y="{y + 18}">{esc(row.agent)}</text>')
        for name, colour in PARTS:
            width = round(BAR_WIDTH * getattr(row, name) / most, 1)
            if width:
                bars.append(f'<rect x="{x}" y="{y + 4}" width="{width}" height="{ROW_HEIGHT - 8}" fill="{colour}">'
                            f"<title>{esc(row.agent)}: {getattr(row, name)} {name}</title></rect>")
                x += width
        bars.append(f'<text x="{x + 6}" y="{y + 18}">{row.posted}</text>')
    legend = "".join(f'<tspan fill="{colour}">■</tspan> {name} ' for name, colour in PARTS)
    bars.append(f'<text x="0" y="{height - 4}">{legend}</text>')
    width = LABEL_WIDTH + BAR_WIDTH + 40
    return (f'<figure><svg role="img" aria-label="Findings posted per agent: fixed, declined, open" '
            f'viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px;font:13px system-ui" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(bars)}</svg>'
            "<figcaption>Findings posted per agent: fixed, declined, still open.</figcaption></figure>")


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.2f}"
