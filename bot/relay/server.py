"""The model relay: one loopback HTTP server per episode through which the agent CLI's
model calls reach the provider. The CLI holds only the relay's per-episode token; the relay holds
the real credential outside the sandbox, swaps it in and forwards over TLS on its own pool of
kept connections (bot/relay/wire.py).

Usage by the pipeline:

    upstream = Upstream(provider, key, scope="repository", fix_hint="connect a new key at …")
    async with ModelRelay(upstream, recorder, run_id, budget=Budget(operator_caps(settings), repo_caps, prior),
                          ledger=Ledger(recorder.db), spend_scope=Scope(conversation, requester, installation),
                          on_stop=kill_cli, on_retry=update_checklist) as relay:
        ... point the CLI's base URL at relay.url (relayed into the sandbox like the bridge) and give
        it relay.token where it expects its key ...

- Accepts the token wherever a CLI puts its key: `x-api-key`, `Authorization: Bearer`,
  `x-goog-api-key`, `api-key` or a query parameter such as `?key=` (its name read after
  percent-decoding, apis.QUERY_KEY_CARRIERS); every carrier present must hold it, else 401. All
  are removed and the real credential is set where the provider's API expects it.
- Every body is parsed and judged before it is forwarded (bot/relay/body_policy.py): what cannot be
  read is refused, provider-run tools pass only with the repository's web access (`web_access`),
  each one dropped, refused or allowed is recorded as a `model_policy` event.
- Forwards only the provider's model APIs, as their records declare them (bot/relay/apis.py,
  bot/relay/wire_apis/); anything else is refused (404) and recorded. `HEAD /` (Claude Code's
  preflight) is answered here.
- What goes back to the CLI is the provider's answer, not the operator's: reply headers pass through
  an allowlist (bot/relay/reply_headers.py, the rest dropped and named in the record), and the
  operator's credential, in any form the masking layer knows, is in no byte the CLI receives: an
  error body that carries it is replaced, a stream has it blanked (bot/relay/reply_guard.py,
  bot/relay/key_guard.py); a compressed reply, which could not be checked, is refused.
- Streams pass through as they arrive; `UsageTap` reads the usage from the bytes going by. A stream
  that reports its usage only when asked (its record says) always asks; what the client did not ask
  for is removed on the way back (bot/relay/reply_filter.py). A request leaves for the provider in
  one write, and a read takes all that has arrived (bot/relay/wire.py); a reply's head leaves for
  the CLI with the first piece of its body when that piece comes within a moment
  (bot/relay/downstream.py).
- Every call is recorded as one `enforced` event "model_call": provider, api, model, status,
  latency, time to first byte, tokens, cost, retries, reply headers dropped; outcome `interrupted` when
  the relay stopped, or the CLI went away, before the call ended. `.calls` holds the same.
- Budgets (bot/relay/budgets.py): each call holds its maximum while in flight; a call once a cap is
  reached is refused in the API's own error format, and `on_stop(reason)` is called once: the
  runner ends the episode (a call refused only for the holds of calls in flight gets a 429 to
  retry). A call that left for the provider and whose usage is not known (a reply without usage, a
  cut stream, no answer, the relay stopping while it was in flight: recorded `interrupted`) is charged
  its maximum. A metered call of a model the price table does not list is refused (unpriced).
- 429 / 529 / 5xx and unreachable providers are retried (bot/relay/retry.py); each wait is told to
  `on_retry(note)` and recorded. A rejected key (401/403) stops the episode with the key's scope
  and where to fix it.
"""
from __future__ import annotations

import asyncio
import functools
import hmac
import http.cookiejar
import inspect
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from adapters.base import Tier
from bot import retry
from bot.record.recorder import Recorder
from bot.relay import (
    apis,
    body_policy,
    downstream,
    http_server,
    reply_guard,
    reply_headers,
    reservation,
    unavailable,
    wire,
)
from bot.relay.body_policy import Checked
from bot.relay.budgets import Budget, Hold, Ledger, Scope
from bot.relay.chatgpt import Login, LoginRefused, Session
from bot.relay.key_guard import KeyGuard
from bot.relay.pricing import PriceTable, builtin_table, unpriced
from bot.relay.reply_filter import UsageChunkFilter
from bot.relay.retry import RetryPolicy, busy_note, retryable, unreachable_reason
from bot.relay.usage import CallUsage, UsageTap
from bot.relay.wire_api import WireApi

log = logging.getLogger(__name__)
TOKEN_ENV = "BOT_RELAY_TOKEN"
REQUEST_CAP = 64 << 20
HEAD_CAP = 64 << 10  # a request line and headers: a CLI's are a few kB (431 past it)
OFF_LOOP_BODY = 1 << 20  # a larger body is parsed and judged on a thread (64 MiB take ~0.2 s)
WRITE_BUFFER = 4 << 20  # bytes buffered towards the CLI before the relay waits for it to read
STOP_GRACE_S = 1.0  # calls in flight when the relay stops get this long to end, then are ended
TIMEOUT = httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=30.0)
_TIMEOUTS = TIMEOUT.as_dict()
UNUSABLE_ADDRESS = ("the model provider's address is not an http or https URL (check BOT_<AGENT>_BASE_URL "
                    "if it is set)")
# never forwarded upstream: hop-by-hop, framing, the client's keys, who-it-bills headers
_DROP_UP = {b"host", b"connection", b"keep-alive", b"proxy-authorization", b"proxy-connection", b"te",
            b"trailer", b"transfer-encoding", b"upgrade", b"content-length", b"accept-encoding", b"cookie",
            b"forwarded", b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-proto", b"via",
            b"openai-organization", b"openai-project", b"x-goog-user-project", b"chatgpt-account-id",
            *apis.KEY_CARRIERS}
# a jar that keeps nothing: a provider's Set-Cookie must not ride along on the episode's later calls
_NO_COOKIES = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=()))
# every name in apis.QUERY_KEY_CARRIERS holds one of these: a query holding none (nor a percent escape) carries no key
_CARRIER_WORDS = (b"key", b"token", b"authorization")


@dataclass(frozen=True)
class Upstream:
    """Where the relay forwards and with which credential."""

    provider: str  # one a wire API's record declares (bot/relay/wire_apis/, apis.DEFAULT_BASE)
    credential: str
    base_url: str | None = None  # the operator's gateway (BOT_<AGENT>_BASE_URL root), else the provider
    bearer: bool | None = None  # send the credential as `Authorization: Bearer` (OAuth tokens)
    scope: str = "operator"  # requester | repository | installation | operator
    fix_hint: str = ""  # where to fix a rejected key, for the answer
    login: Login | None = None  # a Codex ChatGPT login (provider "chatgpt"): refreshed by the relay
    billing: tuple[tuple[str, str], ...] = ()  # the operator's OpenAI-Organization / -Project headers

    @property
    def root(self) -> str:
        return (self.base_url or apis.DEFAULT_BASE[self.provider]).rstrip("/")

    def key_header(self) -> tuple[bytes, bytes]:
        bearer = self.bearer if self.bearer is not None else apis.KEY_HEADER[self.provider] == "authorization"
        if bearer:
            return b"authorization", f"Bearer {self.credential}".encode()
        return apis.KEY_HEADER[self.provider].encode(), self.credential.encode()


@dataclass
class ModelCall:
    provider: str
    api: str
    outcome: str  # ok | http:<status> | refused:<why> | error:unreachable | interrupted (stopped, or the CLI left)
    status: int
    model: str | None = None
    latency_ms: float = 0.0
    ttfb_ms: float | None = None
    usage: CallUsage | None = None
    cost_usd: float | None = None
    retries: int = 0
    notes: list[str] = field(default_factory=list)
    answering: bool = False  # the answer's status line went to the client (no other answer now)
    ceiling: CallUsage | None = None  # the most the forwarded call can cost
    hold: Hold | None = None  # its ceiling, held against the budget until the call is settled
    charged_max: bool = False  # the reply reported no usage: charged its ceiling
    may_bill: bool = False  # it left for the provider and no error answer came back: usage or ceiling is charged
    headers_dropped: list[str] = field(default_factory=list)  # reply headers the allowlist kept from the CLI
    record: WireApi | None = field(default=None, repr=False)  # its API's: how its model is priced

    def detail(self) -> dict[str, Any]:
        return {"provider": self.provider, "api": self.api, "model": self.model, "status": self.status or None,
                "latency_ms": self.latency_ms, "ttfb_ms": self.ttfb_ms,
                "tokens": self.usage.as_dict() if self.usage else None,
                "cost_usd": self.cost_usd if self.cost_usd is not None else ("unpriced" if self.usage else None),
                "retries": self.retries, **({"charged": "maximum"} if self.charged_max else {}),
                **({"headers_dropped": self.headers_dropped} if self.headers_dropped else {}),
                **({"notes": self.notes} if self.notes else {})}


class _Refused(Exception):
    """A call answered by the relay itself: `outcome` is "refused:<why>" or "error:<what>"."""

    def __init__(self, status: int, why: str, message: str, retry_after: str | None = None):
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after
        self.outcome = why if ":" in why else f"refused:{why}"


class ModelRelay:
    def __init__(self, upstream: Upstream, recorder: Recorder, run_id: str, *,
                 budget: Budget | None = None, ledger: Ledger | None = None, spend_scope: Scope | None = None,
                 prices: PriceTable | None = None, retry: RetryPolicy | None = None,
                 on_stop: Callable[[str], Any] | None = None, on_retry: Callable[[str], Any] | None = None,
                 on_call: Callable[[ModelCall], Any] | None = None,
                 transport: wire.Transport | None = None,
                 on_login_refresh: Callable[[str], Any] | None = None, web_access: bool = False):
        self.upstream = upstream
        self.web_access = web_access  # the repository's: provider-run tools pass (recorded)
        self.recorder = recorder
        self.run_id = run_id
        self.budget = budget or Budget()
        self.ledger = ledger
        self.spend_scope = spend_scope or Scope()
        self.prices = prices or builtin_table()
        self.retry = retry or RetryPolicy()
        self.token = secrets.token_urlsafe(32)
        self.token_env = TOKEN_ENV
        self.calls: list[ModelCall] = []
        self.stopped: str | None = None
        self.stop_kind: str | None = None  # budget | key | unavailable | <the caller's word>
        self.unavailable: unavailable.ProviderUnavailable | None = None  # why the provider could not serve
        self.port: int | None = None
        self._token_bytes = self.token.encode()
        self._on_stop, self._on_retry, self._on_call = on_stop, on_retry, on_call
        self._transport = transport  # to the provider: the relay's own pool unless one is handed in
        self._origin = _origin_of(upstream.root)  # None: the address cannot be used, each call is refused
        self._own_transport = transport is None
        self._client: httpx.AsyncClient | None = None  # the ChatGPT login's refreshes only
        self._server: http_server.Server | None = None
        self._background: set[asyncio.Future[Any]] = set()
        self._on_login_refresh = on_login_refresh
        self.session: Session | None = None  # the live ChatGPT login, when the upstream is one
        recorder.add_secrets([self.token, upstream.credential, *(upstream.login.secrets() if upstream.login else ())])
        # what of the operator's must not reach the sandbox: the credential, the login, the billing ids
        self.key_guard = KeyGuard([upstream.credential, *(upstream.login.secrets() if upstream.login else ()),
                                   *(value for _, value in upstream.billing)])
        # what every call adds to its request upstream (a ChatGPT login's own headers come first, fresh)
        self._billing = [(name.encode(), value.encode()) for name, value in upstream.billing] + \
            [(b"accept-encoding", b"identity")]
        self._operator_headers = [upstream.key_header(), *self._billing]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def _upstream(self) -> wire.Transport:
        assert self._transport is not None, "the relay is used inside `async with`"
        return self._transport

    # lifecycle ---------------------------------------------------------------

    async def __aenter__(self) -> ModelRelay:
        if self._transport is None:
            self._transport = wire.Transport(
                httpx.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=60))
        if self.upstream.login is not None:
            self._client = httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, cookies=_NO_COOKIES,
                                             transport=self._transport)
            self.session = Session(self.upstream.login, self._client, on_refresh=self._on_login_refresh,
                                   on_secret=self._new_secrets)
        self._server = http_server.Server(self._serve, head_cap=HEAD_CAP, body_cap=REQUEST_CAP,
                                          write_buffer=WRITE_BUFFER)
        self.port = await self._server.start("127.0.0.1")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server:
            await self._server.stop(STOP_GRACE_S)
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        if self._own_transport and self._transport is not None:
            await self._transport.aclose()

    def _new_secrets(self, secrets: list[str]) -> None:
        """A renewed login's tokens: masked in the record and kept from the sandbox."""
        self.recorder.add_secrets(secrets)
        self.key_guard = KeyGuard([*self.key_guard.secrets, *secrets])

    def stop(self, reason: str, kind: str = "stopped") -> None:
        """Refuse every later call; tell the runner once (it ends the episode); recorded once."""
        if self.stopped is not None:
            return
        self.stopped, self.stop_kind = reason, kind
        self.recorder.record(self.run_id, Tier.ENFORCED, "relay_stop", outcome="stopped", raw=reason)
        self._callback(self._on_stop, reason)

    def _callback(self, callback: Callable[[Any], object] | None, value: Any) -> None:
        if callback is None:
            return
        try:
            result = callback(value)
        except Exception:
            log.exception("relay callback failed")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # one call (bot/relay/http_server.py parsed it) ---------------------------

    async def _serve(self, request: http_server.Request, reply: http_server.Reply) -> None:
        started = time.perf_counter()
        method, raw_path = request.method, request.raw_path
        if method == "HEAD" and raw_path == b"/":
            _respond(reply, 200, b"", b"text/plain")
            return
        route = apis.route(method, raw_path)
        errors = route.wire if route else apis.api_of_path(raw_path)  # the API whose error format answers
        api = route.api if route else errors or ""
        call = ModelCall(self.upstream.provider, api, "ok", 0, model=route.model if route else None,
                         record=route.record if route else None)
        try:
            self._admit(request, route, api)
            assert route is not None  # _admit refuses a request without one
            checked = await self._checked(request, route, call)
            await self._reserve(route, checked, call)
            self._hold(call, checked)
            await self._forward(request, route, checked, reply, call, started)
        except (_Refused, body_policy.BodyRefused) as refused:
            call.outcome, call.status = refused.outcome, refused.status
            if refused.outcome == "refused:path":
                call.notes.append(f"{method} {raw_path[:200].decode('ascii', 'replace')}")
            if isinstance(refused, body_policy.BodyRefused):
                self._record_policy(call, "refused", refused.message)
            retry_after = getattr(refused, "retry_after", None)
            _respond(reply, refused.status, apis.error_body(errors, refused.status, refused.message),
                     extra=[(b"retry-after", retry_after.encode())] if retry_after else ())
        except asyncio.CancelledError:  # the relay stops (the episode ended), or the client left, before the call ended
            call.outcome = "interrupted"
            if request.gone:
                call.notes.append("the client went away before the call ended")
            raise
        except Exception as exc:  # still a recorded call, never a dropped one
            log.exception("model relay call failed")
            call.outcome = f"error:{type(exc).__name__}"
            if not call.answering:
                _respond(reply, 502, apis.error_body(errors, 502, "the model relay failed on this call"))
        finally:
            call.latency_ms = _ms(started)
            self._finish(call)

    def _admit(self, request: http_server.Request, route: apis.Route | None, api: str) -> None:
        if not self._authorized(request.headers, request.query):
            raise _Refused(401, "unauthorized", "the model relay refused the request: it needs this "
                           "episode's token where the API key goes")
        if route is None or not apis.serves(self.upstream.provider, route):
            raise _Refused(404, "path", f"the model relay forwards only the {self.upstream.provider} "
                           "model API; this request is not one of its calls")
        if self.stopped is not None:
            raise _Refused(400, "stopped", f"the episode is stopped: {self.stopped}. Stop now.")

    async def _checked(self, request: http_server.Request, route: apis.Route, call: ModelCall) -> Checked:
        """The request as the body policy lets it go upstream (a GET carries no body to judge)."""
        headers = request.headers
        if request.method != "POST":
            return Checked(b"", list(headers))
        body = await _read_body(request)
        judge = functools.partial(body_policy.check, route.wire, body, headers, web_access=self.web_access,
                                  model=route.model)
        checked = judge() if len(body) <= OFF_LOOP_BODY else await asyncio.to_thread(judge)
        call.model = call.model or checked.model
        for outcome, what in body_policy.provider_run_items(checked):
            self._record_policy(call, outcome, what)
        if checked.strip_usage:
            call.notes.append("asked the provider for the stream's usage; removed from the reply")
        return checked

    def _record_policy(self, call: ModelCall, outcome: str, what: str) -> None:
        call.notes.append(f"{outcome}: {what}")
        self.recorder.record(self.run_id, Tier.ENFORCED, "model_policy", tool=f"{call.provider}/{call.api}",
                             outcome=outcome, raw=what)

    async def _reserve(self, route: apis.Route, checked: Checked, call: ModelCall) -> None:
        """Read the call's maximum from the body as it leaves (bot/relay/reservation.py); refuse a
        metered call the price table cannot price: its spend could not be held to the money caps."""
        read = functools.partial(reservation.ceiling, route.wire, checked.body, route.metered and bool(checked.body))
        if route.metered and checked.body and checked.request is not None:  # the body policy's parse, not another
            read = functools.partial(reservation.ceiling_of, route.wire, checked.request, len(checked.body))
        try:
            checked.ceiling = read() if len(checked.body) <= OFF_LOOP_BODY else await asyncio.to_thread(read)
        except reservation.Unreadable as unreadable:
            raise _Refused(400, "unreadable", str(unreadable)) from None
        if route.metered and self.prices.price(call.model, call.record) is None:
            self.stop(unpriced(call.model, self.prices), "unpriced")
            raise _Refused(400, "unpriced", f"{self.stopped}. Stop now.")

    def _hold(self, call: ModelCall, checked: Checked) -> None:
        """Admit the call against the budgets and hold its maximum; no await between the two, so
        concurrent calls see each other's holds."""
        exceeded = self.budget.exceeded()
        if exceeded is not None and exceeded.held and exceeded.spent < exceeded.limit:
            raise _Refused(429, "budget_held", f"{exceeded.message}. Retry once they are answered.", "1")
        if exceeded is not None:
            self.stop(exceeded.message, "budget")
            raise _Refused(400, "budget", f"{exceeded.message}. Stop now.")
        if checked.ceiling.total_tokens:
            call.ceiling = checked.ceiling
            cost = self.prices.cost(call.model, checked.ceiling, call.record)
            call.hold = self.budget.hold(checked.ceiling.total_tokens, cost)

    def _authorized(self, headers: Iterable[tuple[bytes, bytes]], query: bytes) -> bool:
        presented: list[bytes] = []
        for name, value in headers:
            if name in apis.KEY_CARRIERS and name != b"authorization":
                presented.append(value)
            elif name == b"authorization":
                presented.append(value[7:] if value[:7].lower() == b"bearer " else value)
        presented += [value.encode("latin-1", "replace") for value in _query_keys(query)[0]]
        return bool(presented) and all(hmac.compare_digest(p, self._token_bytes) for p in presented)

    # forwarding --------------------------------------------------------------

    def _request(self, request: http_server.Request, checked: Checked, origin: wire.Origin) -> bytes:
        """The request as it leaves for the provider, head and body. Built here, not by an httpx
        client: a client would add headers the CLI did not send, run auth, redirect and cookie steps the
        relay never wants, and parse back the URL the relay has just put together."""
        headers = [(k, v) for k, v in checked.headers if k not in _DROP_UP]
        headers += [*self.session.headers(), *self._billing] if self.session else self._operator_headers
        query = _query_keys(request.query)[1]
        target = request.raw_path + (b"?" + query if query else b"")
        try:
            head = wire.head(request.method.encode("ascii"), origin, target, headers, checked.body)
        except httpx.LocalProtocolError as refused:
            raise _Refused(400, "request", f"the model relay cannot pass this request on: {refused}") from None
        return head + checked.body

    async def _forward(self, request: http_server.Request, route: apis.Route, checked: Checked,
                       reply: http_server.Reply, call: ModelCall, started: float) -> None:
        response = await self._send_with_retries(request, checked, call)
        call.status = response.status_code
        try:
            if response.status_code in (401, 403):
                await response.aread()
                raise _Refused(response.status_code, "key", self._key_rejected(response))
            response = await self._guarded(response, route, call)
            call.outcome = "ok" if response.status_code < 400 else f"http:{response.status_code}"
            tap = self._tap(route, response, call)
            unasked = UsageChunkFilter() if checked.strip_usage and tap is not None and tap.sse else None
            down = reply_headers.headers_down(response.headers.raw, self.key_guard, resized=unasked is not None)
            self._note_headers(call, down)
            mask = self.key_guard.stream()
            if isinstance(response.stream, wire.Body):  # then the head leaves with the body's first piece
                await response.stream.arrived_within(downstream.HEAD_WAIT_S)
            reply.start(response.status_code, down.headers)
            call.answering = True
            try:
                # each piece as it arrives (a size would hold them), from the stream itself: httpx's
                # aiter_raw would pass each through two more generators
                async for chunk in response.stream:  # type: ignore[union-attr]  # an async one (wire.Body)
                    if call.ttfb_ms is None:
                        call.ttfb_ms = _ms(started)
                    out = mask.feed(unasked.feed(chunk) if unasked is not None else chunk)
                    if out:
                        await reply.send(out)
                    if tap is not None:
                        tap.feed(chunk)
            except httpx.HTTPError as exc:  # the provider cut the stream: the client sees it end early
                call.outcome = f"error:cut ({type(exc).__name__})"
                if down.sized:  # a short sized body cannot be ended cleanly: the connection is closed
                    return
            rest = mask.feed(unasked.close() if unasked is not None else b"") + mask.close()
            reply.end(rest)
            if mask.found:
                self._record_policy(call, "withheld", f"the operator's credential in the reply's body, blanked "
                                    f"in {mask.found} piece(s)")
        finally:
            await response.aclose()
        if tap is not None:
            usage, model = tap.result()
            call.usage, call.model = usage, call.model or model

    async def _guarded(self, response: httpx.Response, route: apis.Route, call: ModelCall) -> httpx.Response:
        """The reply as it may go on to the CLI (bot/relay/reply_guard.py); what it withheld is recorded."""
        passed, withheld = await reply_guard.guarded(response, self.key_guard, route.wire)
        if withheld is not None:
            self._record_policy(call, "withheld", withheld)
        return passed

    def _note_headers(self, call: ModelCall, down: reply_headers.Down) -> None:
        call.headers_dropped = down.dropped
        for name in down.withheld:
            self._record_policy(call, "withheld", f"the operator's credential in the reply header {name}")

    @staticmethod
    def _tap(route: apis.Route, response: httpx.Response, call: ModelCall) -> UsageTap | None:
        if not route.metered or response.status_code >= 400:
            return None
        if response.headers.get("content-encoding", "identity").lower() != "identity":
            call.notes.append("usage unreadable: the provider compressed its reply")
            return None
        return UsageTap(route.wire, response.headers.get("content-type", ""))

    async def _send_with_retries(self, request: http_server.Request, checked: Checked,
                                 call: ModelCall) -> httpx.Response:
        attempt, renewed = 0, False
        response: httpx.Response | None
        headers: Mapping[str, str]
        if self._origin is None:
            self.stop(UNUSABLE_ADDRESS, kind="unreachable")
            raise _Refused(502, "error:unreachable", UNUSABLE_ADDRESS)
        origin = self._origin
        await self._fresh_login()
        while True:
            try:
                call.may_bill = True
                response = await self._upstream.exchange(origin.key, self._request(request, checked, origin), _TIMEOUTS)
            except httpx.ConnectError as exc:  # refused, unresolvable, unroutable: retries cannot help
                call.may_bill = False  # nothing was sent
                reason = unreachable_reason(self.upstream.root, exc)
                self.stop(reason, kind="unreachable")
                raise _Refused(502, "error:unreachable", reason) from None
            except httpx.TransportError as exc:
                response, status, headers = None, 502, {}
                reason = f"provider unreachable ({type(exc).__name__})"
            else:
                status, headers = response.status_code, response.headers
                call.may_bill = status < 400  # an error answer is not billed
                if status == 401 and self.session is not None and not renewed:
                    renewed = True  # an expired login: refresh once, then the same call again
                    if await self._renew_login(self.session, response, call):
                        continue
                if not retryable(status):
                    return response
                reason = f"provider busy ({status})"
            if attempt >= self.retry.retries or self.stopped is not None or self.retry.too_long(status, headers):
                if response is not None:
                    return await self._given_up(response)
                raise _Refused(502, "error:unreachable", f"{reason}; gave up after {attempt} retries")
            attempt += 1
            wait = self.retry.wait_s(attempt, dict(headers))
            if response is not None:
                await response.aclose()
            await self._announce_retry(call, status, wait, attempt, reason)
            await retry.sleep(wait)  # the bot's one injectable wait

    async def _given_up(self, response: httpx.Response) -> httpx.Response:
        """Past the retries: a provider overloaded, out of quota or rate limited ends the episode with
        what the relay saw (recorded, for the fallback); any other answer goes on to the CLI."""
        if not unavailable.worth_reading(response.status_code):
            return response
        body = await response.aread()
        found = unavailable.classify(response.status_code, body, response.headers, self.upstream.provider)
        if found is None:
            return unavailable.replayed(response, body)
        self.unavailable = found
        self.recorder.record(self.run_id, Tier.ENFORCED, unavailable.EVENT, outcome=found.kind, raw=found.as_json())
        self.stop(unavailable.stop_reason(found), "unavailable")
        wait = None if found.retry_after_s is None else str(round(found.retry_after_s))
        raise _Refused(response.status_code, f"error:{found.kind}", f"{self.stopped}. Stop now.", wait)

    async def _announce_retry(self, call: ModelCall, status: int, wait: float, attempt: int, reason: str) -> None:
        note = busy_note(status, wait, attempt, self.retry.retries)
        if reason.startswith("provider unreachable"):
            note = note.replace(f"provider busy ({status})", reason)
        call.retries, call.notes = attempt, call.notes + [note]
        self.recorder.record(self.run_id, Tier.ENFORCED, "model_retry", tool=f"{call.provider}/{call.api}",
                             outcome=f"retry:{status}", raw=note)
        self._callback(self._on_retry, note)

    async def _fresh_login(self) -> None:
        if self.session is None:
            return
        try:
            await self.session.fresh()
        except LoginRefused as refused:
            raise _Refused(401, "key", self._login_rejected(str(refused))) from None

    async def _renew_login(self, session: Session, response: httpx.Response, call: ModelCall) -> bool:
        """After a 401: refresh the login unless the refresh is refused (the 401 then stands)."""
        try:
            await session.refresh(session.login.access_token)
        except LoginRefused as refused:
            call.notes.append(f"login refresh failed: {refused}")
            return False
        await response.aclose()
        call.notes.append("the ChatGPT login was refreshed after a 401")
        return True

    def _login_rejected(self, why: str) -> str:
        reason = f"the ChatGPT login of the {self.upstream.scope} scope could not be renewed ({why})"
        fix = self.upstream.fix_hint or "run `codex login` again and connect the new auth.json"
        self.stop(f"{reason}; {fix}", "key")
        return f"{reason}; {fix}. Stop now."

    def _key_rejected(self, response: httpx.Response) -> str:
        kind = apis.error_type(response.content)
        kind = "" if self.key_guard.carries(kind.encode()) else kind
        reason = (f"the {self.upstream.provider} key of the {self.upstream.scope} scope was rejected by the "
                  f"provider (HTTP {response.status_code}{' ' + kind if kind else ''})")
        fix = self.upstream.fix_hint or "replace that key"
        self.stop(f"{reason}; {fix}", "key")
        return f"{reason}; {fix}. Stop now."

    # the record --------------------------------------------------------------

    def _finish(self, call: ModelCall) -> None:
        # a cut stream's usage may be the first part's only; an interrupted call's was never read
        cut = call.outcome.startswith("error:cut") or call.outcome == "interrupted"
        if (call.usage is None or cut) and call.ceiling is not None and call.may_bill:
            call.usage, call.charged_max = call.ceiling, True  # the provider may have billed all of it
            call.notes.append(f"{_unmetered_why(call.outcome)}: charged its maximum")
        if call.usage is not None:
            call.cost_usd = self.prices.cost(call.model, call.usage, call.record)
            if self.ledger is not None:
                self.ledger.add(self.run_id, self.spend_scope, call.usage.total_tokens, call.cost_usd)
        self.budget.settle(call.hold, call.usage.total_tokens if call.usage else None, call.cost_usd)
        self.calls.append(call)
        self.recorder.record(self.run_id, Tier.ENFORCED, "model_call", tool=f"{call.provider}/{call.api}",
                             outcome=call.outcome, duration_ms=call.latency_ms,
                             raw=json.dumps(call.detail(), sort_keys=True))
        self._callback(self._on_call, call)


def _unmetered_why(outcome: str) -> str:
    if outcome == "interrupted":
        return "the call was ended (the relay stopped, or the client left) before its answer"
    if outcome.startswith("error:cut"):
        return "the reply was cut"
    if outcome.startswith("error:"):
        return "the request left but no answer came"
    return "usage missing from the reply"


def _origin_of(root: str) -> wire.Origin | None:
    try:
        return wire.Origin.of(root)
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        return None


async def _read_body(request: http_server.Request) -> bytes:
    try:
        return await request.body()
    except http_server.RelayBodyTooLarge:
        raise _Refused(413, "too_large", f"the request is over {REQUEST_CAP >> 20} MiB") from None
    except http_server.RelayBodyMalformed as malformed:
        raise _Refused(400, "framing", f"the model relay refused the request: {malformed}") from None
    except http_server.RelayClientGone:
        raise _Refused(400, "disconnected", "the client went away") from None


def _respond(reply: http_server.Reply, status: int, body: bytes, content_type: bytes = b"application/json",
             extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    reply.start(status, [(b"content-type", content_type), (b"content-length", b"%d" % len(body)), *extra])
    reply.end(body)


def _query_keys(query: bytes) -> tuple[list[str], bytes]:
    """The keys a query string carries (names read after percent-decoding) and the query without them;
    a query without one is kept byte for byte."""
    if not query or (b"%" not in query and not any(word in query.lower() for word in _CARRIER_WORDS)):
        return [], query  # no name can be a carrier: the two parses a call made are skipped
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    keys = [value for name, value in pairs if name.strip().lower() in apis.QUERY_KEY_CARRIERS]
    if not keys:
        return [], query
    return keys, urlencode([(n, v) for n, v in pairs if n.strip().lower() not in apis.QUERY_KEY_CARRIERS]).encode()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
