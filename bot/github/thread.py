"""Everything an agent's thread context needs from GitHub, fetched by the bot with its own token.

    hosts = Hosts.of(settings)                  # GitHub's API and web host, as the operator set them
    data = await fetch(thread, is_pr=True, target={"type": "review_comment", "id": 42}, hosts=hosts)
    data.comments, data.review_threads, data.files, data.trigger, data.checks, data.problems

    saved = await download(attachment_urls(texts, repo, hosts), repo, folder, token, hosts)

The issue or pull request, its comments (the newest COMMENTS_READ), for a pull request its reviews, its
review comments grouped by review thread and its files with their patches, the review comment a
request was written on, the failing check runs of the head commit with the tail of the failing
Actions jobs' logs (Checks and Actions APIs), or the failing jobs of a run an issue names.
A part GitHub refuses (a permission the App lacks, an outage) is left out and named in
`problems`; it never stops the job. The text is returned as GitHub holds it: hidden content is
taken out by the caller (bot.record.hidden) before any agent reads it.

Downloads (job logs, attachments) carry the installation token on the first request only, and
only to GitHub's API or web host; a redirect (to the log store, to a signed image URL) is
followed without it. The token never reaches the agent: the files are written by the bot.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar, cast, runtime_checkable
from urllib.parse import quote, urlsplit

import httpx
from gidgethub import BadRequest

from bot.config import Settings
from bot.errors import BotError
from bot.github import paged
from bot.github.client import API_VERSION, COMMENTS_READ, MEDIA_TYPE, USER_AGENT, RetryingAPI, transient

T = TypeVar("T")
log = logging.getLogger("bot.github.thread")
FAILING = ("failure", "timed_out", "startup_failure")
MAX_FAILING = 5  # failing check runs described (and logs fetched)
MAX_ANNOTATIONS = 10
LOG_LINES = 60
LOG_CHARS = 8_000
LOG_READ_CAP = 64 << 20  # a longer log is read this far only
LOG_KEEP_BYTES = 256 << 10  # of a log, only its end is kept while reading
ATTACHMENTS_MAX = 10
ATTACHMENT_BYTES = 10 << 20
ATTACHMENTS_TOTAL_BYTES = 40 << 20
MAX_REDIRECTS = 5
# Lists read up to a bound (bot.github.paged); a cut one is named in `problems`
FILES_READ = 3_000  # GitHub lists at most 3000 files of a pull request
REVIEWS_READ = 300  # the newest
REVIEW_COMMENTS_READ = 1_000  # the newest
CHECK_RUNS_READ = 500
ANNOTATIONS_READ = 500
JOBS_READ = 500
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "gif", "webp")
TEXT_EXTENSIONS = ("txt", "log", "md", "json", "csv", "yaml", "yml", "diff", "patch", "xml", "toml")


@runtime_checkable
class GitHubThread(Protocol):
    """One issue or pull request as a job talks to it: bot.github.client.Thread, or a test's fake.
    Every member the job, the review and the thread context use is declared here."""

    @property
    def api(self) -> RetryingAPI: ...
    @property
    def repo(self) -> str: ...
    @property
    def number(self) -> int: ...
    @property
    def prefix(self) -> str: ...
    @property
    def own_logins(self) -> frozenset[str]: ...

    async def _authed(self, call: Callable[[], Awaitable[T]]) -> T: ...

    async def fresh_token(self) -> str | None: ...

    async def react(self, target: dict[str, object], content: str = "eyes") -> None: ...

    async def permission(self, login: str, *, fresh: bool = False) -> str: ...

    async def issue(self) -> dict[str, object]: ...

    async def pull(self) -> dict[str, object]: ...

    async def comments(self) -> list[dict[str, object]]: ...

    async def create_comment(self, body: str, review_thread: int | None = None, *, marker: str | None = None,
                             look_first: bool = False) -> int: ...

    async def update_comment(self, comment_id: int, body: str, review: bool = False) -> None: ...

    async def delete_comment(self, comment_id: int, review: bool = False) -> None: ...

    async def find_comment(self, marker: str, review_thread: int | None = None) -> int | None: ...

    async def review_threads(self) -> list[dict[str, object]]: ...

    async def review_comment_reactions(self, comment_id: int) -> list[dict[str, object]]: ...

    async def resolve_review_thread(self, thread_id: str) -> None: ...


@dataclass(frozen=True)
class Hosts:
    """GitHub's REST API and its web host (GITHUB_API_URL, GITHUB_SERVER_URL; GHES has its own):
    where a thread's logs and attachments come from, and the only origins its token is sent to."""

    api_url: str
    server_url: str

    @classmethod
    def of(cls, settings: Settings) -> Hosts:
        return cls(settings.github_api_url, settings.server_url)

    @property
    def origins(self) -> set[str]:
        return {_origin(self.api_url), _origin(self.server_url)}


@dataclass
class ReviewThread:
    path: str
    line: int | None
    outdated: bool
    diff_hunk: str
    comments: list[dict]


@dataclass
class Check:
    name: str
    conclusion: str
    url: str
    title: str = ""
    summary: str = ""
    annotations: list[dict] = field(default_factory=list)
    log_tail: str | None = None
    log_note: str | None = None  # why there is no log, or that it was cut


@dataclass
class Attachment:
    url: str
    path: Path | None = None
    kind: str | None = None  # "PNG image", "text", ...
    size: int = 0
    skipped: str | None = None  # why it was not downloaded


@dataclass
class ThreadData:
    repo: str
    number: int
    is_pr: bool
    issue: dict
    comments: list[dict]
    pull: dict | None = None
    reviews: list[dict] = field(default_factory=list)
    review_threads: list[ReviewThread] = field(default_factory=list)
    files: list[dict] = field(default_factory=list)
    trigger: dict | None = None  # the review comment the request was written on
    checks: list[Check] = field(default_factory=list)
    checked_ref: str | None = None  # the commit (or run) whose checks were looked at
    attachments: list[Attachment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


async def fetch(thread: GitHubThread, *, is_pr: bool, target: dict | None = None, hosts: Hosts) -> ThreadData:
    """The whole thread; a part GitHub refuses is named in `problems` instead."""
    data = ThreadData(repo=thread.repo, number=thread.number, is_pr=is_pr,
                      issue=await thread.issue(), comments=await thread.comments())
    if len(data.comments) >= COMMENTS_READ:
        data.problems.append(f"the thread's comments: the newest {COMMENTS_READ} were read, any older ones were not")
    if is_pr:
        await _pull_parts(thread, data, target or {})
    await _part(data, "failing checks (the App needs Checks: read and Actions: read)",
                _failing_checks(thread, data, hosts))
    return data


async def _part(data: ThreadData, what: str, work: Awaitable[None]) -> None:
    try:
        await work
    except Exception as exc:
        if not (transient(exc) or _refused(exc)):
            raise
        log.warning("thread context: %s not fetched: %s", what, exc)
        data.problems.append(f"{what}: GitHub answered {_reason(exc)}")


def _refused(exc: Exception) -> bool:
    return isinstance(exc, BadRequest) or isinstance(exc, httpx.HTTPStatusError)


def _reason(exc: Exception) -> str:
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    return f"{int(status)}" if status else type(exc).__name__


async def _pull_parts(thread: GitHubThread, data: ThreadData, target: dict) -> None:
    base = f"{thread.prefix}/pulls/{thread.number}"
    data.pull = await thread.pull()

    async def files() -> None:
        data.files = await _list(thread, data, f"{base}/files", "the pull request's files", most=FILES_READ)

    async def reviews() -> None:
        data.reviews = await _list(thread, data, f"{base}/reviews", "the reviews", most=REVIEWS_READ, newest=True)

    async def threads() -> None:
        comments = await _list(thread, data, f"{base}/comments", "the review comments", most=REVIEW_COMMENTS_READ,
                               newest=True)
        data.review_threads = group_review_threads(comments)
        if target.get("type") == "review_comment":
            data.trigger = next((c for c in comments if c.get("id") == target.get("id")), None) or \
                await _get(thread, f"{thread.prefix}/pulls/comments/{target['id']}")

    await _part(data, "the pull request's files", files())
    await _part(data, "the reviews", reviews())
    await _part(data, "the review comments", threads())


async def _list(thread: GitHubThread, data: ThreadData, url: str, what: str, *, most: int, newest: bool = False,
                key: str | None = None, per_page: int = paged.PER_PAGE) -> list[dict]:
    """The list's first (or `newest`) `most` items; a cut list is named in `data.problems`."""
    read = paged.read_newest if newest else paged.read_list
    listed = await thread._authed(lambda: read(thread.api, url, most=most, per_page=per_page, key=key))
    if listed.refused:
        data.problems.append(f"{what}: only {len(listed.items)} read (the page links of GitHub's answer were "
                             "refused: not on GitHub's API)")
    elif listed.cut:
        data.problems.append(f"{what}: GitHub lists more; only the {'newest' if newest else 'first'} "
                             f"{len(listed.items)} were read")
    return listed.items


async def _get(thread: GitHubThread, url: str) -> dict:
    return await thread._authed(lambda: thread.api.getitem(url))


def group_review_threads(comments: list[dict]) -> list[ReviewThread]:
    """Review comments by thread (a reply names its thread's first comment), in order."""
    roots: dict[int, ReviewThread] = {}
    for comment in sorted(comments, key=lambda c: (c.get("created_at") or "", c.get("id") or 0)):
        root = cast(int, comment.get("in_reply_to_id") or comment.get("id"))
        if root not in roots:
            line = comment.get("line")
            roots[root] = ReviewThread(path=comment.get("path") or "", line=line or comment.get("original_line"),
                                       outdated=line is None and comment.get("subject_type") != "file",
                                       diff_hunk=comment.get("diff_hunk") or "", comments=[])
        roots[root].comments.append(comment)
    return list(roots.values())


# ---------------------------------------------------------------- CI

async def _failing_checks(thread: GitHubThread, data: ThreadData, hosts: Hosts) -> None:
    if data.pull is not None:
        sha = (data.pull.get("head") or {}).get("sha")
        if sha:
            data.checked_ref = sha
            await _check_runs(thread, data, sha, hosts)
        return
    for run_id, job_id in named_runs([data.issue.get("body") or ""]
                                     + [c.get("body") or "" for c in data.comments], data.repo, hosts.server_url):
        data.checked_ref = f"run {run_id}"
        await _run_jobs(thread, data, run_id, job_id, hosts)


async def _check_runs(thread: GitHubThread, data: ThreadData, sha: str, hosts: Hosts) -> None:
    runs = await _list(thread, data, f"{thread.prefix}/commits/{sha}/check-runs?filter=latest", "the check runs",
                       most=CHECK_RUNS_READ, key="check_runs")
    async with _client() as client:
        for run in [r for r in runs if r.get("conclusion") in FAILING][:MAX_FAILING]:
            output = run.get("output") or {}
            check = Check(name=run.get("name") or "check", conclusion=run["conclusion"],
                          url=run.get("html_url") or run.get("details_url") or "",
                          title=output.get("title") or "", summary=output.get("summary") or "")
            if output.get("annotations_count"):
                check.annotations = await _annotations(thread, data, run["id"])
            job_id = actions_job_id(run)
            if job_id is None:
                check.log_note = "not a GitHub Actions job: no log to fetch"
            else:
                await _job_log(client, thread, check, job_id, hosts)
            data.checks.append(check)


async def _annotations(thread: GitHubThread, data: ThreadData, run_id: int) -> list[dict]:
    found = await _list(thread, data, f"{thread.prefix}/check-runs/{run_id}/annotations",
                        f"the annotations of check run {run_id}", most=ANNOTATIONS_READ, per_page=50)
    failures = [a for a in found if a.get("annotation_level") == "failure"] or found
    return failures[:MAX_ANNOTATIONS]


async def _run_jobs(thread: GitHubThread, data: ThreadData, run_id: int, job_id: int | None, hosts: Hosts) -> None:
    jobs = await _list(thread, data, f"{thread.prefix}/actions/runs/{run_id}/jobs", f"the jobs of run {run_id}",
                       most=JOBS_READ, key="jobs")
    chosen = [j for j in jobs if (j.get("id") == job_id if job_id else j.get("conclusion") in FAILING)]
    async with _client() as client:
        for job in chosen[:MAX_FAILING]:
            check = Check(name=job.get("name") or "job", conclusion=job.get("conclusion") or job.get("status") or "",
                          url=job.get("html_url") or "")
            await _job_log(client, thread, check, job["id"], hosts)
            data.checks.append(check)


def actions_job_id(run: dict) -> int | None:
    """The Actions job behind a check run (its details URL names it; for Actions the ids agree)."""
    match = re.search(r"/actions/runs/\d+/job/(\d+)", run.get("details_url") or run.get("html_url") or "")
    if match:
        return int(match.group(1))
    return run.get("id") if ((run.get("app") or {}).get("slug") == "github-actions") else None


def named_runs(texts: list[str], repo: str, server_url: str) -> list[tuple[int, int | None]]:
    """Actions runs of this repository on GitHub's web host linked in the thread: (run id, job id or None)."""
    pattern = re.compile(re.escape(f"{server_url}/{repo}/actions/runs/") + r"(\d+)(?:/job/(\d+))?", re.I)
    found: list[tuple[int, int | None]] = []
    for text in texts:
        for run, job in pattern.findall(text):
            key = (int(run), int(job) if job else None)
            if key not in found:
                found.append(key)
    return found[:2]


async def _job_log(client: httpx.AsyncClient, thread: GitHubThread, check: Check, job_id: int, hosts: Hosts) -> None:
    url = f"{hosts.api_url}{thread.prefix}/actions/jobs/{job_id}/logs"
    try:
        got = await get(client, url, token=thread.api.oauth_token, cap=LOG_READ_CAP, keep=LOG_KEEP_BYTES, hosts=hosts)
    except (httpx.HTTPError, DownloadRefused) as exc:
        check.log_note = f"log not available ({_reason(exc) if isinstance(exc, httpx.HTTPStatusError) else exc})"
        return
    check.log_tail = log_tail(got.body.decode("utf-8", "replace"))
    if got.truncated:
        check.log_note = f"the log is longer than {LOG_READ_CAP >> 20} MB: only its beginning was read"


_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?", re.M)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def log_tail(text: str, lines: int = LOG_LINES, chars: int = LOG_CHARS) -> str:
    """The lines that explain a failure: up to the last `##[error]` line (the cleanup steps after
    it say nothing), at most `lines` lines and `chars` characters, timestamps and colours off."""
    text = _ANSI.sub("", _TIMESTAMP.sub("", text.replace("\r\n", "\n")))
    all_lines = text.rstrip("\n").split("\n")
    errors = [i for i, line in enumerate(all_lines) if "##[error]" in line]
    end = errors[-1] + 1 if errors else len(all_lines)
    start = max(end - lines, 0)
    shown = "\n".join(all_lines[start:end])
    return shown[-chars:].split("\n", 1)[-1] if len(shown) > chars else shown


# ---------------------------------------------------------------- downloads

class DownloadRefused(BotError):
    """Too large, a type not accepted, or a redirect that leaves http(s)."""


@dataclass
class Fetched:
    body: bytes
    content_type: str
    truncated: bool = False


def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0), follow_redirects=False,
                             headers={"user-agent": USER_AGENT})


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


async def get(client: httpx.AsyncClient, url: str, *, token: str | None, cap: int, keep: int | None = None,
              accept: str | None = None, hosts: Hosts) -> Fetched:
    """GET with redirects followed by hand: the token goes with the first request only, and only
    to GitHub's own API or web origin (`hosts`). Without `keep` a body over `cap` bytes is refused; with it
    at most `cap` bytes are read and only the last `keep` of them kept (a log's end)."""
    headers = {"accept": accept} if accept else {}
    if _origin(url) == _origin(hosts.api_url):
        headers = {"accept": accept or MEDIA_TYPE, "x-github-api-version": API_VERSION}
    if token and _origin(url) in hosts.origins:
        headers["authorization"] = f"Bearer {token}"
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", url, headers=headers) as response:
            if response.is_redirect:
                url = str(response.url.join(response.headers.get("location", "")))
                if urlsplit(url).scheme not in ("https", "http"):
                    raise DownloadRefused("a redirect away from http(s)")
                headers = {}
                continue
            response.raise_for_status()
            return await _read(response, cap, keep)
    raise DownloadRefused("too many redirects")


async def _read(response: httpx.Response, cap: int, keep: int | None) -> Fetched:
    declared = response.headers.get("content-length")
    if keep is None and declared and declared.isdigit() and int(declared) > cap:
        raise DownloadRefused(f"larger than {cap >> 20} MB")
    body, size, truncated = bytearray(), 0, False
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            if keep is None:
                raise DownloadRefused(f"larger than {cap >> 20} MB")
            truncated = True
            break
        body += chunk
        if keep is not None and len(body) > 2 * keep:
            del body[:-keep]
    return Fetched(bytes(body[-keep:] if keep is not None else body), response.headers.get("content-type", ""),
                   truncated)


_URL = re.compile(r"https?://[^\s<>\"'()\[\]`]+")


def attachment_urls(texts: list[str], repo: str, hosts: Hosts) -> list[str]:
    """Files attached to the thread (user-attachments, GitHub's image hosts) and images of this
    repository (blob/raw links), in order of appearance, each once. Only GitHub's hosts: a link
    elsewhere is never fetched."""
    found: list[str] = []
    for text in texts:
        for url in _URL.findall(text or ""):
            url = url.rstrip(".,;:!?")
            if url not in found and _download_plan(url, repo, hosts) is not None:
                found.append(url)
    return found


def _download_plan(url: str, repo: str, hosts: Hosts) -> tuple[str, str | None] | None:
    """(the URL to GET, the Accept header) for an attachment URL, or None when it is not one."""
    server = re.escape(hosts.server_url)
    if re.match(server + r"/user-attachments/(?:assets/[\w-]+|files/\d+/[^/?#]+)$", url) or \
            re.match(server + "/" + re.escape(repo) + r"/assets/\d+/[\w-]+$", url, re.I) or \
            re.match(r"https://(?:private-)?user-images\.githubusercontent\.com/[\w./%-]+(?:\?[\w=&.%-]*)?$", url):
        return url, None
    own = re.match(rf"(?:{server}/{re.escape(repo)}/(?:blob|raw)|https://raw\.githubusercontent\.com/"
                   rf"{re.escape(repo)})/([^/?#]+)/([^?#]+?\.(?:{'|'.join(IMAGE_EXTENSIONS)}))(?:\?raw=true)?$",
                   url, re.I)
    if own:
        ref, path = own.groups()
        if ".." in path.split("/"):
            return None
        api = f"{hosts.api_url}/repos/{repo}/contents/{quote(path)}?ref={quote(ref, safe='')}"
        return api, "application/vnd.github.raw"
    return None


_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png", "PNG image"), (b"\xff\xd8\xff", "jpg", "JPEG image"),
          (b"GIF87a", "gif", "GIF image"), (b"GIF89a", "gif", "GIF image"), (b"%PDF-", "pdf", "PDF"))


def sniff(body: bytes, url: str) -> tuple[str, str] | None:
    """(extension, description) from the bytes themselves, or None for a type not accepted.
    The name and the Content-Type a server sends are not trusted."""
    for magic, ext, kind in _MAGIC:
        if body.startswith(magic):
            return ext, kind
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return "webp", "WebP image"
    if b"\0" not in body[:8192]:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        ext = urlsplit(url).path.rsplit(".", 1)[-1].lower()
        return (ext if ext in TEXT_EXTENSIONS else "txt"), "text"
    return None


async def download(urls: list[str], repo: str, folder: Path, token: str | None, hosts: Hosts) -> list[Attachment]:
    """Each attachment into `folder` (readable by the sandbox user, written only by the bot),
    capped in number, size and type."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    _empty(folder)
    saved: list[Attachment] = []
    total = 0
    async with _client() as client:
        for index, url in enumerate(urls, 1):
            if index > ATTACHMENTS_MAX:
                saved.append(Attachment(url, skipped=f"more than {ATTACHMENTS_MAX} attachments"))
                continue
            item = await _one(client, url, repo, folder, index, token, ATTACHMENTS_TOTAL_BYTES - total, hosts)
            total += item.size
            saved.append(item)
    return saved


async def _one(client: httpx.AsyncClient, url: str, repo: str, folder: Path, index: int, token: str | None,
               room: int, hosts: Hosts) -> Attachment:
    target, accept = _download_plan(url, repo, hosts) or (url, None)
    try:
        got = await get(client, target, token=token, cap=min(ATTACHMENT_BYTES, max(room, 0)), accept=accept,
                        hosts=hosts)
    except DownloadRefused as exc:
        return Attachment(url, skipped=str(exc))
    except httpx.HTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        return Attachment(url, skipped=f"GitHub answered {status}" if status else f"{type(exc).__name__}")
    sniffed = sniff(got.body, url)
    if sniffed is None:
        return Attachment(url, skipped="not an image, PDF or text file")
    ext, kind = sniffed
    path = folder / f"{index:02d}-{_stem(url)}.{ext}"
    _write_new(path, got.body)
    return Attachment(url, path=path, kind=kind, size=len(got.body))


def _stem(url: str) -> str:
    name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:40]
    return safe or hashlib.sha256(url.encode()).hexdigest()[:12]


def _empty(folder: Path) -> None:
    """Last turn's downloads go: the folder holds this turn's attachments only."""
    for entry in os.scandir(folder):
        if not entry.is_dir(follow_symlinks=False):
            os.unlink(entry.path)


def _write_new(path: Path, body: bytes) -> None:
    """Replace whatever is at `path` (never following a link there) with `body`, world-readable."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    os.fchmod(fd, 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(body)
