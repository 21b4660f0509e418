"""The automations part of a repository's settings page: each automation its default branch declares
(name, trigger, its next scheduled run in UTC, agent, what it may do, its caps, its last runs with
their outcome, their model cost, why a refused one was refused, and a link to the thread it answered in), Run now for
one that runs in its own issue (a schedule or `fire`), and for one that declares `fire` its token: made,
rotated or revoked by a maintainer (bot/settings/routes.py), shown once right after it is made.
Every interpolated value goes through `esc`: names, prompts and errors come from the repository.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field

from bot.automations.fire_tokens import TokenRow
from bot.automations.runs import LastRun
from bot.automations.schedule import next_run
from bot.settings.automation_config import Declared
from bot.settings.pages import csrf_field, esc
from bot.workspace.repo_config_model import Automation


@dataclass(frozen=True)
class Where:
    base: str  # the settings page's path
    csrf: str
    public_url: str  # the service's, for the fire URL
    github_web: str  # GitHub's web host, for the threads' links
    repo: str
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))  # for the next scheduled run


def section(declared: Declared, tokens: dict[str, TokenRow], last: dict[str, list[LastRun]], where: Where,
            fresh: tuple[str, str] | None = None) -> str:
    """`fresh`: (automation, token) just made, shown this once."""
    body = ("<h2>Automations</h2><p>Declared in <code>.github/bot.yml</code> on the default branch"
            f"{' (' + esc(declared.source) + ')' if declared.source else ''}; they run without a mention.</p>")
    body += _fresh(fresh, where.public_url, where.repo) if fresh else ""
    if declared.problem:
        body += f'<p class="notice error" role="alert">{esc(declared.problem)}</p>'
    if not declared.automations:
        return body + ('' if declared.problem else '<p class="muted">This repository declares no automation.</p>')
    rows = "".join(_row(a, tokens.get(a.name), where, _runs(last.get(a.name, []), where))
                   for a in declared.automations)
    return body + ("<table><caption>Declared automations</caption><thead><tr><th scope=col>Automation</th>"
                   "<th scope=col>Runs as</th><th scope=col>Last runs</th><th scope=col>Fire token</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table>")


def trigger(automation: Automation) -> str:
    """The `on:` of an automation in a few words."""
    on = automation.on
    if on.issues is not None:
        return f"issues: {', '.join(on.issues.types)}"
    if on.pull_request is not None:
        return f"pull_request: {', '.join(on.pull_request.types)}"
    checks = on.check_suite or on.workflow_run
    if checks is not None:
        return f"{on.event}: {', '.join(checks.conclusion)}"
    if on.schedule:
        return "schedule: " + "; ".join(on.schedule)
    return on.event  # issue_comment, fire


def _row(automation: Automation, token: TokenRow | None, where: Where, runs: str) -> str:
    caps = f"{automation.max_runs_per_day} runs a day, ${automation.max_usd_per_day:g} of model cost a day"
    if automation.on.check_suite is not None or automation.on.workflow_run is not None:
        caps += f", {automation.max_attempts} attempts"
    return (f'<tr><td data-label="Automation"><strong>{esc(automation.name)}</strong><br>'
            f'<span class="muted">on {esc(trigger(automation))}</span>{_next(automation, where.now)}'
            f'{_run_now(automation, where)}</td>'
            f'<td data-label="Runs as">{esc(automation.agent)}; may {esc(", ".join(automation.may))}; '
            f'{esc(caps)}</td>'
            f'<td data-label="Last runs">{runs}</td>'
            f'<td data-label="Fire token">{_token_cell(automation, token, where.base, where.csrf)}</td></tr>')


def _next(automation: Automation, now: dt.datetime) -> str:
    when = next_run(automation, now)
    return f'<br><span class="next-run">next run {esc(when.strftime("%Y-%m-%d %H:%M UTC"))}</span>' if when else ""


def _run_now(automation: Automation, where: Where) -> str:
    """Run now, for an automation that runs in its own issue (a schedule or `fire`): queued as a fired
    run (bot/settings/routes.py); the form's key makes a resent form one run."""
    if not automation.on.schedule and automation.on.fire is None:
        return ""
    return (f'<form method="post" action="{esc(where.base)}/automations/run">{csrf_field(where.csrf)}'
            f'<input type="hidden" name="name" value="{esc(automation.name)}">'
            f'<input type="hidden" name="key" value="now-{uuid.uuid4().hex}">'
            '<button class="secondary" type="submit">Run now</button></form>')


OUTCOMES = {"done": "answered", "failed": "failed", "queued": "queued", "running": "running",
            "cancelled": "stopped"}


def _runs(last: list[LastRun], where: Where) -> str:
    if not last:
        return '<span class="muted">none yet</span>'
    items = "".join(f"<li>{_run(run, where)}</li>" for run in last)
    return f'<ul class="runs">{items}</ul>'


def _run(run: LastRun, where: Where) -> str:
    at = dt.datetime.fromtimestamp(run.at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    if run.kind == "run":
        what = OUTCOMES.get(run.job_status or "", "ran")
    else:
        what = f"{run.kind}: {run.outcome or ''}".rstrip(": ")
    cost = f' · <span class="cost">${run.cost_usd:.4f}</span>' if run.cost_usd is not None else ""
    link = (f' · <a href="{esc(where.github_web)}/{esc(where.repo)}/issues/{run.number}" rel="noreferrer">'
            f"#{run.number}</a>" if run.number else "")
    cls = "bad" if run.kind != "run" or run.job_status == "failed" else "ok" if run.job_status == "done" else ""
    return f'<span class="muted">{esc(at)}</span> <span class="{cls}">{esc(what)}</span>{cost}{link}'


def _token_cell(automation: Automation, token: TokenRow | None, base: str, csrf: str) -> str:
    if automation.on.fire is None:
        return '<span class="muted">—</span>'
    name = f'<input type="hidden" name="name" value="{esc(automation.name)}">'
    if token is None:
        return (f'<form method="post" action="{esc(base)}/automations/token">{csrf_field(csrf)}{name}'
                '<button type="submit">Create token</button></form>')
    made = dt.datetime.fromtimestamp(token.created_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f'<span class="muted">made by {esc(token.created_by)}, {esc(made)}</span><br>'
            f'<form method="post" action="{esc(base)}/automations/token">{csrf_field(csrf)}{name}'
            '<button class="secondary" type="submit">Rotate</button></form>'
            f'<form method="post" action="{esc(base)}/automations/token/revoke">{csrf_field(csrf)}{name}'
            '<button class="danger" type="submit">Revoke</button></form>')


def _fresh(fresh: tuple[str, str], public_url: str, repo: str) -> str:
    name, token = fresh
    url = f"{public_url.rstrip('/')}/automations/{repo}/{name}"
    return (f'<div class="notice" role="status"><p>The token for <code>{esc(name)}</code>. Copy it now: it is not '
            f"shown again (only its digest is stored), and it replaces any earlier one.</p>"
            f'<p><code id="fire-token">{esc(token)}</code></p><p>Fire the automation with:</p>'
            f"<pre>curl -X POST {esc(url)} \\\n  -H 'Authorization: Bearer {esc(token)}' \\\n"
            "  -H 'Content-Type: application/json' -d '{\"text\": \"…\"}'</pre></div>")
