"""The one GitHub client module: App JWT → installation token cache, reactions, comments,
review-thread replies, a permission cache, rate-limit backoff.

    tokens = TokenCache.of(settings)            # one per process: the entry point's App and API URL
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await installation_thread(client, tokens, installation_id, "octo/repo", 12)
        await thread.react({"type": "issue_comment", "id": 123}, "eyes")
        comment_id = await thread.create_comment("working…")
        await thread.update_comment(comment_id, "done")

`Thread` (the object the pipeline uses) needs an authenticated `RetryingAPI`: an installation
token (service) or `GITHUB_TOKEN` (action):
`RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url)`.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime
from typing import Any, TypeVar, cast

import httpx
from gidgethub import BadRequest, GitHubBroken, HTTPException, RateLimitExceeded, apps

from bot import metrics, retry
from bot.config import Settings
from bot.config.table import variable
from bot.github import paged
from bot.github.links import LinkKeepingAPI
from bot.permissions import own_logins
from bot.record import render
from bot.record.defang import markers
from bot.record.redact import redact, running_secrets
from bot.record.render import Rendered

log = logging.getLogger("bot.github.client")
T = TypeVar("T")
USER_AGENT = "github-agent-bot/0.1"
# Every REST call names the API version it was written against, and GitHub's media type unless
# it asks for another representation (a diff, raw bytes).
API_VERSION = "2022-11-28"
MEDIA_TYPE = "application/vnd.github+json"
_GIDGETHUB_DEFAULT_ACCEPT = "application/vnd.github.v3+json"
TOKEN_REFRESH_MARGIN_S = 1200  # a job must still hold a valid token when it pushes at its end
PERMISSION_TTL_S = 300
COMMENTS_READ = 1_000  # of a thread's comments, the newest read (GitHub lists them oldest first)
RATE_LIMIT_ATTEMPTS = 5  # gidgethub's own loop asks handle_rate_limit_error after each
LEVELS = ("admin", "maintain", "write", "triage", "read", "none")
_COMMENT_POST = re.compile(r"/issues/\d+/comments$|/pulls/\d+/comments/\d+/replies$")
# A pull request's review threads (GitHub's GraphQL API: REST has no threads, nor resolving one).
REVIEW_THREADS = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    reviewThreads(first: 100) { nodes { id isResolved resolvedBy { login }
      comments(first: 50) { nodes { databaseId authorAssociation body author { login } } } } } } } }"""
# The REST API a client talks to unless it is handed the operator's (GITHUB_API_URL)
# Who posts as the bot in a thread not told otherwise: the App of the default handle (BOT_HANDLE)
DEFAULT_LOGINS = frozenset(own_logins(str(variable("BOT_HANDLE").default), in_actions=False))
RESOLVE_THREAD = """mutation($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } } }"""


class RetryingAPI(LinkKeepingAPI):
    """gidgethub over httpx that honours Retry-After, primary and secondary limits, and 5xx, and
    keeps each answer's Link header for bot.github.paged."""

    max_wait_s = 300.0

    def __init__(self, client: httpx.AsyncClient, oauth_token: str | None = None, *,
                 base_url: str, requester: str = USER_AGENT, **kwargs: Any) -> None:
        # gidgethub types its client as httpx2's (the same API)
        super().__init__(client, requester, oauth_token=oauth_token,  # type: ignore[arg-type]
                         base_url=base_url.rstrip("/"), **kwargs)

    async def _request(self, method: str, url: str, headers: Any, body: bytes = b"") -> Any:
        headers = versioned(headers)
        try:
            answer = await super()._request(method, url, headers, body)
        except BaseException:
            metrics.GITHUB_CALLS.labels(method, "0").inc()
            raise
        metrics.GITHUB_CALLS.labels(method, str(answer[0])).inc()
        return answer

    async def handle_rate_limit_error(self, *, method: str, url: str, exception: HTTPException,
                                      attempt: int) -> bool:
        if method == "POST" and _COMMENT_POST.search(url.split("?")[0]) and _outcome_unknown(exception):
            return False  # GitHub may have stored it: Thread.create_comment looks before posting again
        delay = backoff_delay(exception, attempt)
        if delay is None or attempt >= RATE_LIMIT_ATTEMPTS or delay > self.max_wait_s:
            return False
        log.warning("GitHub %s %s answered %s; retrying in %.1f s (attempt %d)",
                    method, url, exception.status_code, delay, attempt)
        metrics.RATE_LIMIT_WAITS.inc()
        metrics.RATE_LIMIT_WAIT_SECONDS.inc(delay)
        await retry.sleep(delay)
        return True


def versioned(headers: dict[str, str]) -> dict[str, str]:
    """The headers with the API version, and GitHub's media type in place of gidgethub's v3 default."""
    headers = {**headers, "x-github-api-version": API_VERSION}
    if headers.get("accept", _GIDGETHUB_DEFAULT_ACCEPT) == _GIDGETHUB_DEFAULT_ACCEPT:
        headers["accept"] = MEDIA_TYPE
    return headers


def backoff_delay(exc: HTTPException, attempt: int) -> float | None:
    """Seconds to wait before retrying, or None when the failure is not worth retrying."""
    headers = {k.lower(): v for k, v in (getattr(exc, "headers", None) or {}).items()}
    status = int(exc.status_code)
    if (asked := retry.retry_after_s(headers)) is not None:
        return asked
    if isinstance(exc, RateLimitExceeded) or headers.get("x-ratelimit-remaining") == "0":
        reset = float(headers.get("x-ratelimit-reset") or time.time() + 60)
        return max(reset - time.time(), 1.0)
    if status in (403, 429) and _is_secondary_limit(exc):
        return 60.0 * 2 ** (attempt - 1)
    if isinstance(exc, GitHubBroken) or status >= 500:
        return float(2 ** (attempt - 1))
    return None


def _outcome_unknown(exc: HTTPException) -> bool:
    """A 5xx may come after the write took effect (a gateway timeout); a rate limit never does."""
    return isinstance(exc, GitHubBroken) or int(exc.status_code) >= 500


def _is_secondary_limit(exc: HTTPException) -> bool:
    if int(exc.status_code) == 429:
        return True
    message = " ".join(str(a) for a in exc.args).lower()
    return "secondary rate limit" in message or "abuse" in message


class TokenCache:
    """Installation tokens, minted from the App JWT, reused until shortly before they expire."""

    def __init__(self, app: Callable[[], tuple[str, str]], api_url: str) -> None:
        """`app`: the App's id and private key, asked at each mint; `api_url`: where to mint, and
        where the threads of its installations talk to."""
        self._app = app
        self.api_url = api_url
        self._tokens: dict[int, tuple[str, float]] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    @classmethod
    def of(cls, settings: Settings) -> TokenCache:
        """The cache of the entry point's App (its id and key) at its GitHub API."""
        return cls(lambda: (settings.app_id(), settings.private_key()), settings.github_api_url)

    async def token(self, client: httpx.AsyncClient, installation_id: int, stale: str | None = None) -> str:
        """The installation's token; `stale` (a token GitHub just refused) is never returned again."""
        async with self._locks.setdefault(installation_id, asyncio.Lock()):
            cached = self._tokens.get(installation_id)
            if cached and cached[1] - TOKEN_REFRESH_MARGIN_S > time.time() and cached[0] != stale:
                return cached[0]
            api = RetryingAPI(client, base_url=self.api_url)
            app_id, private_key = self._app()
            minted = await apps.get_installation_access_token(
                api, installation_id=str(installation_id), app_id=app_id, private_key=private_key)
            expires = datetime.fromisoformat(minted["expires_at"].replace("Z", "+00:00")).timestamp()
            self._tokens[installation_id] = (minted["token"], expires)
            return minted["token"]


_permissions: dict[tuple[str, str], tuple[str, float]] = {}


class Thread:
    """One issue or pull request of one repository, as the pipeline talks to it.

    With `token_source` (service mode: the installation's TokenCache) a call GitHub refuses with
    401, because the installation token expired during a long job, is made again once with a
    freshly minted token."""

    def __init__(self, api: RetryingAPI, repo: str, number: int,
                 token_source: Callable[[str | None], Awaitable[str]] | None = None, *,
                 own_logins: frozenset[str] = DEFAULT_LOGINS):
        """`own_logins`: who posts as the bot here (`bot_logins` of the entry point's settings)."""
        self.api, self.repo, self.number = api, repo, number
        self.own_logins = own_logins
        self.prefix = f"/repos/{repo}"
        self._token_source = token_source

    async def fresh_token(self) -> str | None:
        """The token to use from now on (renewed when close to expiry), also for this thread's calls."""
        if self._token_source is not None:
            self.api.oauth_token = await self._token_source(None)
        return self.api.oauth_token

    async def _authed(self, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await call()
        except BadRequest as exc:
            if int(exc.status_code) != 401 or self._token_source is None:
                raise
            log.warning("GitHub refused the installation token (401); minting a new one")
            self.api.oauth_token = await self._token_source(self.api.oauth_token)
            return await call()

    async def react(self, target: dict, content: str = "eyes") -> None:
        kind = target.get("type")
        if kind == "issue_comment":
            url = f"{self.prefix}/issues/comments/{target['id']}/reactions"
        elif kind == "review_comment":
            url = f"{self.prefix}/pulls/comments/{target['id']}/reactions"
        elif kind == "issue":
            url = f"{self.prefix}/issues/{self.number}/reactions"
        else:
            return  # a review body cannot be reacted to through REST
        await self._authed(lambda: self.api.post(url, data={"content": content}))

    async def create_comment(self, body: str, review_thread: int | None = None, *, marker: str | None = None,
                             look_first: bool = False) -> int:
        """Post a comment; a network error or a 5xx (the comment may have been stored anyway) is
        retried. With `marker` (a string only this comment's body carries) the thread is searched
        for it before every retry, and before the first try when `look_first` (a job retried after
        a crash), so the comment is never posted twice."""
        if review_thread:
            url = f"{self.prefix}/pulls/{self.number}/comments/{review_thread}/replies"
        else:
            url = f"{self.prefix}/issues/{self.number}/comments"
        body = _masked(body)
        look = look_first and bool(marker)

        async def post_once() -> int:
            nonlocal look
            if look:
                found = await self.find_comment(cast(str, marker), review_thread)
                if found is not None:
                    return found
            look = bool(marker)  # a failed post may have been stored: look before the next one
            return (await self._authed(lambda: self.api.post(url, data={"body": body})))["id"]

        return await retry.retrying(post_once, retry.GITHUB_WRITE, worth_retrying=_network_or_5xx,
                                    what="posting a comment")

    async def find_comment(self, marker: str, review_thread: int | None = None) -> int | None:
        """The id of the newest comment of this thread that the bot wrote (`is_own_comment`) and
        that carries `marker` as an HTML comment outside code, or None. Anyone can paste a marker
        into their own comment, and the bot's answers quote agent text (code included); only the
        marker the bot itself appended counts. Only the newest COMMENTS_READ comments are looked
        at: a marked comment older than those is not found (and the log says the list was cut)."""
        url = f"{self.prefix}/{'pulls' if review_thread else 'issues'}/{self.number}/comments"
        for comment in reversed(await self._newest(url)):
            if is_own_comment(comment, self.own_logins) and marker in markers(comment.get("body") or ""):
                return cast(int, comment["id"])
        return None

    async def _newest(self, url: str) -> list[dict]:
        listed = await self._authed(lambda: paged.read_newest(self.api, url, most=COMMENTS_READ))
        return listed.items

    async def review_comment_reactions(self, comment_id: int) -> list[dict]:
        """The first page (100) of a review comment's reactions: enough to count a team's 👍 and 👎."""
        url = f"{self.prefix}/pulls/comments/{comment_id}/reactions?per_page=100"
        return list(await self._authed(lambda: self.api.getitem(url)) or [])

    async def update_comment(self, comment_id: int, body: str, review: bool = False) -> None:
        kind = "pulls" if review else "issues"
        body = _masked(body)
        await self._authed(lambda: self.api.patch(f"{self.prefix}/{kind}/comments/{comment_id}",
                                                  data={"body": body}))

    async def delete_comment(self, comment_id: int, review: bool = False) -> None:
        """Take one of the bot's comments back; one already gone (404) is taken back too."""
        kind = "pulls" if review else "issues"
        try:
            await self._authed(lambda: self.api.delete(f"{self.prefix}/{kind}/comments/{comment_id}"))
        except BadRequest as exc:
            if int(exc.status_code) != 404:
                raise

    async def comments(self) -> list[dict]:
        """The thread's newest COMMENTS_READ comments, oldest first (the thread context says when
        there may be older ones: bot.github.thread)."""
        return await self._newest(f"{self.prefix}/issues/{self.number}/comments")

    async def issue(self) -> dict:
        return await self._authed(lambda: self.api.getitem(f"{self.prefix}/issues/{self.number}"))

    async def pull(self) -> dict:
        return await self._authed(lambda: self.api.getitem(f"{self.prefix}/pulls/{self.number}"))

    async def review_threads(self) -> list[dict]:
        """The pull request's review threads (the first 100, each with its first 50 comments)."""
        owner, name = self.repo.split("/", 1)
        endpoint = graphql_url(self.api.base_url)
        data = await with_retries(lambda: self.api.graphql(REVIEW_THREADS, endpoint=endpoint, owner=owner,
                                                           name=name, number=self.number))
        pull = ((data or {}).get("repository") or {}).get("pullRequest") or {}
        return list((pull.get("reviewThreads") or {}).get("nodes") or [])

    async def resolve_review_thread(self, thread_id: str) -> None:
        endpoint = graphql_url(self.api.base_url)
        await with_retries(lambda: self.api.graphql(RESOLVE_THREAD, endpoint=endpoint, thread=thread_id))

    async def permission(self, login: str, *, fresh: bool = False) -> str:
        """The user's permission (its role name, else the legacy admin|write|read|none), cached a
        few minutes; `fresh` asks GitHub anyway (right before an effect: a revoked writer must not
        ride on the cache) and caches the new answer."""
        key = (self.repo, login.lower())
        cached = _permissions.get(key)
        if cached and cached[1] > time.time() and not fresh:
            return cached[0]
        try:
            reply = await self._authed(lambda: self.api.getitem(f"{self.prefix}/collaborators/{login}/permission"))
            role = reply.get("role_name")
            permission = role if role in LEVELS else (reply.get("permission") or "none")
        except BadRequest as exc:
            if int(exc.status_code) != 404:
                raise
            permission = "none"
        _permissions[key] = (permission, time.time() + PERMISSION_TTL_S)
        return permission


async def installation_thread(client: httpx.AsyncClient, tokens: TokenCache, installation_id: int,
                              repo: str, number: int, own_logins: frozenset[str] = DEFAULT_LOGINS) -> Thread:
    token = await tokens.token(client, installation_id)
    return Thread(RetryingAPI(client, oauth_token=token, base_url=tokens.api_url), repo, number,
                  token_source=lambda stale: tokens.token(client, installation_id, stale=stale), own_logins=own_logins)


def graphql_url(api: str) -> str:
    """GitHub's GraphQL endpoint beside its REST API `api`: `/graphql`, on Enterprise Server `/api/graphql`."""
    return api.removesuffix("/v3") + "/graphql" if api.endswith("/api/v3") else api + "/graphql"


def transient(exc: BaseException) -> bool:
    """A failure worth trying again later: the network, GitHub's 5xx, a rate limit."""
    if isinstance(exc, (httpx.TransportError, GitHubBroken)):
        return True
    if isinstance(exc, HTTPException):
        return int(exc.status_code) >= 500 or backoff_delay(exc, 1) is not None
    return False


async def with_retries(call: Callable[[], Awaitable[T]], policy: retry.Policy = retry.GITHUB_WRITE) -> T:
    """Retry an idempotent GitHub write (an edit, a reaction) on network errors and 5xx so it is
    delayed, not lost. Comments are posted with `Thread.create_comment`, which retries itself."""
    return await retry.retrying(call, policy, worth_retrying=_network_or_5xx, what="GitHub call")


def _network_or_5xx(exc: BaseException) -> bool:
    return isinstance(exc, (httpx.TransportError, GitHubBroken))


def bot_logins(settings: Settings) -> frozenset[str]:
    """Who posts as the bot (bot.permissions.own_logins) under these settings' handle, and in an
    Action (GITHUB_ACTIONS) also the workflow token's account."""
    return frozenset(own_logins(settings.handle, settings.text("GITHUB_ACTIONS") == "true"))


def is_own_comment(comment: dict, own: Collection[str]) -> bool:
    """The one rule for "the bot wrote this": a Bot account whose login is one of the bot's `own`
    (lower-case). Any other App is a Bot too, and a person can type anything, markers included."""
    user = comment.get("user") or {}
    return user.get("type") == "Bot" and (user.get("login") or "").lower() in own


def is_own_login(login: str | None, own: Collection[str]) -> bool:
    """GraphQL names a Bot without REST's `[bot]` suffix: either spelling of one of the bot's `own`."""
    bare = {name.removesuffix("[bot]") for name in own}
    return (login or "").lower().removesuffix("[bot]") in bare


def _masked(body: str) -> Rendered:
    """Every comment the bot posts or edits, whichever code path composed it, is masked for the
    secrets of the jobs running now (bot.record.leaks) and passes the renderer's gate
    (bot.record.render.outgoing): the last gate before GitHub."""
    return render.outgoing(redact(body, running_secrets()))
