"""The live run page: `/runs/<run id>`, linked from the tracking comment while the agent works.

While the run is going, the page streams its transcript over server-sent events (every recorded
event: tool calls with their outcomes, progress, the answer); once it has finished, the page is
the whole record, `bot runs show` as HTML: who asked, agent and version, session, tokens and cost,
the enforced, attested and unobserved items, the egress decisions and the diff of the bot's commit.

Who may look: only someone signed in with GitHub (the settings page's login and session, so the
page lives under /settings where that cookie is sent; `/runs/<id>` redirects there) whom GitHub
lets read the run's repository: `GET /repos/{owner}/{repo}` with the viewer's own token answers
404 to someone who cannot see a private repository, and names their permission otherwise. Local
runs (`bot run`) have no repository and no page. Nothing secret is on it: every text shown was
redacted when recorded and is masked again here (token shapes), nothing is rendered as HTML, and
the browser is told to run nothing but the page's own script.
"""
from __future__ import annotations

import asyncio
import html
import json
import re
import secrets as random_tokens
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.config import Settings
from bot.errors import BotError
from bot.record import provenance
from bot.record.recorder import Recorder
from bot.record.redact import redact
from bot.service import store
from bot.settings.github import API_HEADERS
from bot.settings.session import SESSION_COOKIE, WebSession, load_session
from bot.workspace import worktrees
from bot.workspace.git import GitError, git_head

POLL_S = 0.25
# An open stream answers to the viewer's session on every poll and to GitHub's word on their read
# access this often; a viewer holds this many streams at once (per process).
ACCESS_RECHECK_S = 30.0
MAX_STREAMS_PER_VIEWER = 4
MAX_TEXT = 600
MAX_DIFF = 200_000
DIFF_READ_CAP = MAX_DIFF * 4  # what is read of git's diff: no character takes more than four bytes
_RUN_ID = re.compile(r"^[0-9a-f]{8,64}$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA = re.compile(r"^[0-9a-f]{40,64}$")


def page_path(run_id: str) -> str:
    return f"/settings/runs/{run_id}"


class RunPageRefusal(BotError):
    """Stop handling and answer with this page (no such run, not signed in, not allowed)."""

    def __init__(self, status: int, body: str):
        super().__init__(status)
        self.status, self.body = status, body


async def short_link(request: Request) -> Response:
    """The link the tracking comment carries: short, and outside /settings."""
    run_id = request.path_params["run_id"]
    if not _RUN_ID.match(run_id):
        return _html(404, _doc("No such run", "<p>There is no run with this id.</p>"))
    return RedirectResponse(page_path(run_id), status_code=302)


async def run_page(request: Request) -> Response:
    recorder = Recorder(store.connect(settings=request.app.state.settings))
    try:
        run = await _allowed(request, recorder)
        if run["status"] == "running":
            return _html(200, _live(run, _requester(recorder, run)))
        return _html(200, await _record(recorder, run, request.app.state.settings.data_dir))
    except RunPageRefusal as refused:
        return _html(refused.status, refused.body)
    finally:
        recorder.db.close()


_open_streams: dict[int, int] = {}  # viewer's GitHub user id -> streams open in this process


async def run_events(request: Request) -> Response:
    recorder = Recorder(store.connect(settings=request.app.state.settings))
    try:
        run, viewer = await _allowed_viewer(request, recorder)
    except RunPageRefusal as refused:
        recorder.db.close()
        return Response("not allowed" if refused.status != 404 else "no such run", refused.status,
                        media_type="text/plain")
    if _open_streams.get(viewer.user_id, 0) >= MAX_STREAMS_PER_VIEWER:
        recorder.db.close()
        return Response(f"too many open streams: close another tab of this run first (at most "
                        f"{MAX_STREAMS_PER_VIEWER} at once)", 429, media_type="text/plain",
                        headers={"Retry-After": "30"})
    _open_streams[viewer.user_id] = _open_streams.get(viewer.user_id, 0) + 1
    last = request.headers.get("last-event-id") or ""
    watch = _AccessWatch(request.app.state.settings, request.cookies.get(SESSION_COOKIE), viewer.user_id,
                         _repo_of(run) or "")
    return EventSourceResponse(_stream(recorder, run["id"], int(last) if last.isdigit() else 0, watch), ping=15)


class _AccessWatch:
    """Whether the viewer who opened a stream may still read it: signed in with the same session
    (every poll, from the database), and GitHub still lets them read the repository (every
    ACCESS_RECHECK_S). A GitHub outage keeps the stream: access is re-asked on the next round."""

    def __init__(self, settings: Settings, cookie: str | None, user_id: int, repo: str):
        self.settings, self.cookie, self.user_id, self.repo = settings, cookie, user_id, repo
        self.checked_at = time.monotonic()

    async def still_allowed(self) -> bool:
        session = load_session(self.settings, self.cookie)
        if session is None or session.user_id != self.user_id:
            return False
        if time.monotonic() - self.checked_at < ACCESS_RECHECK_S:
            return True
        self.checked_at = time.monotonic()
        try:
            return await can_read(self.settings.github_api_url, session.token, self.repo)
        except httpx.HTTPError:
            return True


async def _stream(recorder: Recorder, run_id: str, after: int, watch: _AccessWatch) -> AsyncIterator[dict[str, Any]]:
    """Every event past `after`, as they are recorded; `done` once the run has finished;
    `revoked` (and the end) once the viewer has signed out or lost read access."""
    try:
        async for message in _messages(recorder, run_id, after, watch):
            yield message
    finally:
        recorder.db.close()
        _open_streams[watch.user_id] -= 1
        if _open_streams[watch.user_id] <= 0:
            del _open_streams[watch.user_id]


async def _messages(recorder: Recorder, run_id: str, after: int, watch: _AccessWatch) -> AsyncIterator[dict[str, Any]]:
    while True:
        if not await watch.still_allowed():
            yield {"event": "revoked", "data": json.dumps({"reason": "signed out or no longer allowed"})}
            return
        run = recorder.run(run_id) or {}
        for event in recorder.db.query("SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq",
                                       [run_id, after]):
            after = event["seq"]
            yield {"event": "transcript", "id": str(after), "data": json.dumps(shown(event))}
        if run.get("status") != "running":
            yield {"event": "done", "data": json.dumps({"status": run.get("status")})}
            return
        await asyncio.sleep(POLL_S)


def shown(event: dict[str, Any]) -> dict[str, Any]:
    """What the page shows of one recorded event: never its arguments, a short masked text."""
    return {"seq": event["seq"], "ts": event["ts"], "tier": event["tier"], "kind": event["kind"],
            "tool": _clean(event.get("tool")), "outcome": _clean(event.get("outcome")),
            "duration_ms": event.get("duration_ms"), "text": _clean(_text_of(event.get("raw") or ""))}


# ---- who may look

async def _allowed(request: Request, recorder: Recorder) -> dict[str, Any]:
    return (await _allowed_viewer(request, recorder))[0]


async def _allowed_viewer(request: Request, recorder: Recorder) -> tuple[dict[str, Any], WebSession]:
    """The run and its viewer, when the signed-in viewer may read its repository on GitHub;
    else RunPageRefusal."""
    run_id = request.path_params["run_id"]
    run = recorder.run(run_id) if _RUN_ID.match(run_id) else None
    repo = _repo_of(run)
    if run is None or run["id"] != run_id or repo is None:
        raise RunPageRefusal(404, _doc("No such run", "<p>There is no run with this id.</p>"))
    session = load_session(request.app.state.settings, request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise RunPageRefusal(401, _doc("Sign in to see this run", (
            "<p>This run is in a repository on GitHub; sign in to show that you can read it.</p>"
            "<p><a href=/settings/login>Sign in with GitHub</a>, then open this link again.</p>")))
    try:
        readable = await can_read(request.app.state.settings.github_api_url, session.token, repo,
                                  _job_spec(recorder, run).get("repo_id"))
    except httpx.HTTPError:
        raise RunPageRefusal(502, _doc("GitHub unreachable", (
            "<p>GitHub could not be asked whether you may read this run's repository. Try again in a "
            "moment.</p>"))) from None
    if not readable:
        raise RunPageRefusal(403, _doc("Not yours to see", (
            f"<p>GitHub does not let @{html.escape(session.login)} read this run's repository.</p>")))
    return run, session


def _repo_of(run: dict[str, Any] | None) -> str | None:
    conversation = (run or {}).get("conversation") or ""
    repo = conversation.rpartition("#")[0]
    return repo if _REPO.match(repo) else None


async def can_read(github_api_url: str, token: str, repo: str, repo_id: object = None) -> bool:
    """Whether GitHub lets this token's user read `repo`: a public repository, or their permission.
    With the run's repository id, the repository GitHub names `repo` now must be that one: a
    repository created again under the name (or another renamed into it) opens nothing."""
    headers = dict(API_HEADERS, Authorization=f"Bearer {token}")
    async with httpx.AsyncClient(base_url=github_api_url, headers=headers, timeout=15) as client:
        response = await client.get(f"/repos/{repo}")
    if response.status_code >= 500:
        raise httpx.HTTPStatusError("GitHub failed", request=response.request, response=response)
    if response.status_code != 200:
        return False
    data = response.json()
    if isinstance(repo_id, int) and data.get("id") != repo_id:
        return False
    return data.get("private") is False or bool((data.get("permissions") or {}).get("pull"))


# ---- the pages

def _live(run: dict[str, Any], requester: str) -> str:
    nonce = random_tokens.token_urlsafe(16)
    script = """
const list = document.getElementById("events");
const source = new EventSource(location.pathname + "/events");
source.addEventListener("transcript", (message) => {
  const e = JSON.parse(message.data);
  const item = document.createElement("li");
  item.dataset.tier = e.tier;
  item.textContent = [e.tier, e.kind, e.tool, e.outcome, e.duration_ms != null ? e.duration_ms + " ms" : "",
                      e.text].filter(Boolean).join(" · ");
  list.appendChild(item);
});
source.addEventListener("done", () => { source.close(); location.reload(); });
source.addEventListener("revoked", () => { source.close(); location.reload(); });
"""
    body = (f"{_summary(run, requester=requester)}<h2>Live transcript</h2><p id=state>running…</p><ol id=events></ol>"
            f"<script nonce={nonce}>{script}</script>")
    return _doc(f"Run {run['id'][:12]}", body)


async def _record(recorder: Recorder, run: dict[str, Any], data_dir: Path) -> str:
    events = recorder.events(run["id"])
    tiers = provenance.tier_summary(events, run.get("egress") or {})
    rows = "".join(f"<tr><td>{tier}</td><td>{summary['count']}</td><td>{_e(summary['what'])}</td></tr>"
                   for tier, summary in tiers.items())
    egress = "".join(f"<tr><td>{_e(host)}</td><td>{c.get('allowed', 0)}</td><td>{c.get('denied', 0)}</td>"
                     f"<td>{c.get('bytes_up', 0)}</td><td>{c.get('bytes_down', 0)}</td></tr>"
                     for host, c in sorted((run.get("egress") or {}).items()))
    items = "".join(f"<li data-tier={_e(e['tier'])}>{_e(_line(shown(e)))}</li>" for e in events)
    diff = await _diff(run, events, data_dir)
    body = (f"{_summary(run, events, _requester(recorder, run))}"
            f"<h2>Provenance</h2><table><tr><th>tier</th><th>count</th><th>what</th></tr>{rows}</table>"
            f"<h2>Egress</h2><table><tr><th>host</th><th>allowed</th><th>denied</th><th>bytes up</th>"
            f"<th>bytes down</th></tr>{egress or '<tr><td colspan=5>no connections</td></tr>'}</table>"
            f"<h2>Transcript</h2><ol id=events>{items}</ol>"
            f"<h2>Diff</h2>{f'<pre>{_e(diff)}</pre>' if diff else '<p>no commit</p>'}")
    return _doc(f"Run {run['id'][:12]}", body)


def _summary(run: dict[str, Any], events: list[dict[str, Any]] | None = None, requester: str = "—") -> str:
    spend = provenance.model_spend(events or [])
    tokens = "—" if spend is None else f"{spend.total_tokens} tokens" + (
        f", ${spend.cost_usd:.4f}" if spend.cost_usd is not None else "")
    facts = [("repository and thread", run.get("conversation")), ("asked by", requester),
             ("agent", " ".join(filter(None, [run.get("agent"), run.get("agent_version")]))),
             ("session", (run.get("session_id") or "—") + (" (resumed)" if run.get("resumed") else "")),
             ("status", run.get("status")), ("started", run.get("started_at")),
             ("finished", run.get("finished_at") or "—"), ("sandbox tier", run.get("sandbox_tier")),
             ("model spend", tokens)]
    return "<dl>" + "".join(f"<dt>{name}</dt><dd>{_e(_clean(str(value if value is not None else '—')))}</dd>"
                            for name, value in facts) + "</dl>"


def _requester(recorder: Recorder, run: dict[str, Any]) -> str:
    author = _job_spec(recorder, run).get("author")
    return f"@{author}" if isinstance(author, str) else "—"


def _job_spec(recorder: Recorder, run: dict[str, Any]) -> dict[str, Any]:
    """The spec of the job the run served ({} for none): who asked, and the repository's id."""
    if not (run.get("job_id") or "").isdigit():
        return {}
    rows = recorder.db.query("SELECT spec FROM jobs WHERE id = ?", [int(run["job_id"])])
    try:
        spec = json.loads(rows[0]["spec"]) if rows else {}
    except (TypeError, ValueError):
        spec = {}
    return spec if isinstance(spec, dict) else {}


async def _diff(run: dict[str, Any], events: list[dict[str, Any]], data_dir: Path) -> str:
    """The bot's own commit against the run's base, from the bot's mirror (never the agent's tree)."""
    commit = next((e["raw"] for e in reversed(events) if e["tier"] == "enforced" and e["kind"] == "commit"), "")
    base, repo = run.get("base_commit") or "", _repo_of(run)
    if not (_SHA.match(commit or "") and _SHA.match(base) and repo):
        return ""
    try:
        mirror = worktrees.mirror_path(repo, data_dir)
    except ValueError:
        return ""
    try:
        out = await git_head("diff", "--no-color", "--no-ext-diff", "--no-textconv", base, commit,
                             cap=DIFF_READ_CAP, cwd=mirror)
    except GitError:
        return ""
    text = redact(out.stdout.decode("utf-8", "replace"), ())  # masked whole, then cut
    if out.cut or len(text) > MAX_DIFF:
        return text[:MAX_DIFF] + f"\n… (the diff was cut at {MAX_DIFF:,} characters)"
    return text


def _line(e: dict[str, Any]) -> str:
    duration = f"{e['duration_ms']} ms" if e.get("duration_ms") is not None else ""
    return " · ".join(filter(None, [e["tier"], e["kind"], e["tool"], e["outcome"], duration, e["text"]]))


def _text_of(raw: str) -> str:
    """The readable part of a recorded line: a CLI's JSON event's text, else the line itself."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    found = _first_text(data, depth=0)
    return found if found is not None else raw


def _first_text(data: object, depth: int) -> str | None:
    if depth > 6:
        return None
    if isinstance(data, dict):
        for key in ("text", "result", "content", "message", "output", "delta"):
            if isinstance(text := data.get(key), str) and text.strip():
                return text
        values = list(data.values())
    elif isinstance(data, list):
        values = data
    else:
        return None
    for value in values:
        found = _first_text(value, depth + 1)
        if found:
            return found
    return None


def _clean(text: str | None, limit: int = MAX_TEXT) -> str:
    if not text:
        return ""
    text = redact(text, ())  # the token shapes; the run's own secret values were masked when recorded
    return text if len(text) <= limit else text[:limit] + "…"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _doc(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><meta charset=utf-8><title>{_e(title)}</title>"
            f"<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}"
            f"dt{{font-weight:600}}pre{{overflow:auto;background:#f6f8fa;padding:1rem}}"
            f"td,th{{padding:.2rem .6rem;text-align:left}}</style><h1>{_e(title)}</h1>{body}</html>")


def _html(status: int, body: str) -> HTMLResponse:
    script = re.search(r"<script nonce=([\w-]+)>", body)
    script_src = f"'nonce-{script.group(1)}'" if script else "'none'"
    headers = {"Content-Security-Policy": f"default-src 'none'; style-src 'unsafe-inline'; "
                                          f"script-src {script_src}; connect-src 'self'; "
                                          "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
               "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
               "X-Content-Type-Options": "nosniff"}
    return HTMLResponse(body, status_code=status, headers=headers)


routes = [
    Route("/runs/{run_id}", short_link, methods=["GET"], name="run_link"),
    Route("/settings/runs/{run_id}", run_page, methods=["GET"], name="run_page"),
    Route("/settings/runs/{run_id}/events", run_events, methods=["GET"], name="run_events"),
]
