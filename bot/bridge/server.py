"""The waist between the agent and everything it may change: one loopback MCP server per
episode, through which every effect of the agent is admitted, contained, braked and recorded.

Usage by the pipeline:

    policy = Admission(worktree, protected=repo.protected_paths, max_calls=200, ...)
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=data_dir / "runs" / run_id,
                            read_thread=fetch_thread, run_sandbox=sandbox_for_run(worktree, policy, tier, host=host),
                            on_progress=update_checklist, on_halt=kill_cli) as bridge:
        episode.bridge = bridge.bridge_for(spawner.inside_bridge_url(config))  # adapters.base.Bridge
        env[bridge.token_env] = bridge.token       # the CLI reads the bearer from its env
        ... run the CLI; `@bot stop` -> bridge.halt("stopped by @alice")

- Streamable HTTP (the `mcp` SDK's low-level server, stateless) served by uvicorn
  in-process on 127.0.0.1:<random port> (`.port`, `.url`); the server name the CLIs
  see is "bot"; tools: `TOOL_NAMES`, each declared as one object in bot/bridge/catalog.py
  (and, in a review run, bot/bridge/review_tools.py; in a run that may label,
  bot/bridge/label_tools.py) and dispatched by its name.
- Every HTTP request needs `Authorization: Bearer <.token>` (random per episode),
  else 401.
- Every tools/call is checked against the schema, the policy (`Admission`) and the
  call budget, executed, and recorded as one `enforced` event (tool, arguments
  digest, outcome "ok" | "refused:<code>" | "error", duration). `.calls` is the
  in-memory log of the same.
- `halt(reason)`: from then on every call is refused ("refused:halted"), a running
  `run` sandbox is killed, `on_halt(reason)` is called (the runner kills the CLI),
  and a `halt` event is recorded. `wall_clock_s` halts by itself when it expires; so does
  setting the `stop` event (pass the job's cancel event: `@bot stop`, shutdown).
- Leaving the `async with`, however the episode ended (Ctrl-C in `bot run`, a worker's shutdown
  cancelling the job), first kills and reaps a running `run` sandbox: none outlives its bridge.
  A cancelled `run` call kills its own sandbox too.
- `.connected` is set once a client listed the tools: the runner's strict-mode check;
  `.tools_listed` counts those tools/list requests (bot/episode/honesty.py).
- `run` calls are served one at a time: a client sending many in parallel would otherwise hold
  that many sandboxes, each with the full memory and process caps, at once.
- `.stdout` (bot/bridge/stdout_mark.py) is how far the runner has read the CLI's stdout: a call is
  recorded (and answered) only once every line the CLI wrote before it arrived is in the record,
  or after `catch_up_s`, its event then saying how many bytes were still unread.
"""
from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.base import Bridge, Tier
from bot import metrics
from bot.bridge import catalog
from bot.bridge.admission import Admission, Refusal
from bot.bridge.stdout_mark import CATCH_UP_S, StdoutMark
from bot.bridge.tool import CallContext, Labeler, Tool, halted_refusal
from bot.bridge.tools import ProgressThrottle, RunSandbox, ToolFailure
from bot.loopback import LoopbackServer
from bot.record.recorder import Recorder, elapsed_ms
from bot.review.findings import Collector

log = logging.getLogger(__name__)
SERVER_NAME = "bot"
TOKEN_ENV = "BOT_BRIDGE_TOKEN"
TOOL_NAMES = tuple(tool.name for tool in catalog.offered(review=False))


class BridgeServer:
    def __init__(self, worktree: Path, policy: Admission, recorder: Recorder, run_id: str, *,
                 read_thread: Callable[[], Awaitable[str]] | None = None,
                 run_sandbox: RunSandbox | None = None,
                 on_progress: Callable[[str], Any] | None = None,
                 on_halt: Callable[[str], Any] | None = None,
                 progress_interval_s: float = 2.0, wall_clock_s: float | None = None,
                 stop: asyncio.Event | None = None, scratch_root: Path,
                 read_dirs: tuple[str, ...] = (), review: Collector | None = None,
                 labels: Labeler | None = None, catch_up_s: float = CATCH_UP_S):
        self.worktree = Path(worktree)
        self.read_dirs = read_dirs  # absolute folders read_file may also read (the attachments)
        self.policy = policy
        self.recorder = recorder
        self.run_id = run_id
        self.token = secrets.token_urlsafe(32)
        self.token_env = TOKEN_ENV
        self.review = review  # a review run's collector: its tools are offered
        self.labels = labels  # the run may label its issue: add_labels is offered
        self.tool_names = tuple(tool.name for tool in self._offered())
        self.calls: list[dict] = []
        self.connected = asyncio.Event()
        self.tools_listed = 0
        self.halted: str | None = None
        self.rejected_requests = 0
        self.port: int | None = None
        self.stdout = StdoutMark()  # the runner reads the CLI's stdout into it
        self._catch_up_s = catch_up_s
        self._on_halt = on_halt
        self._progress = ProgressThrottle(on_progress, progress_interval_s)
        self._wall_clock_s = wall_clock_s
        self._running: set[Any] = set()
        self._closed = False
        self._tools = CallContext(
            policy=policy, scratch_root=scratch_root,
            progress=self._progress, track_run=self._track_run, run_turn=asyncio.Lock(),
            halted=lambda: self.halted, read_dirs=read_dirs, read_thread=read_thread,
            run_sandbox=run_sandbox, review=review, labels=labels)
        self._server: LoopbackServer | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._stop = stop
        self._stop_watch: asyncio.Task | None = None
        recorder.add_secrets([self.token])

    # lifecycle ---------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def bridge_for(self, url: str | None = None) -> Bridge:
        """The adapters' view: URL as seen by the CLI (inside the sandbox), token and its env var."""
        return Bridge(url=url or self.url, token=self.token, token_env=self.token_env,
                      server_name=SERVER_NAME, tools=self.tool_names)

    async def __aenter__(self) -> BridgeServer:
        app = _BearerGuard(self._mcp_app(), self)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=1, access_log=False, log_config=None)
        self._server = LoopbackServer(config, "MCP bridge")
        self.port = await self._server.start()
        if self._wall_clock_s:
            self._timer = asyncio.get_running_loop().call_later(
                self._wall_clock_s, self.halt, f"wall-clock limit of {self._wall_clock_s:.0f} s reached")
        if self._stop is not None:
            self._stop_watch = asyncio.create_task(self._halt_when_stopped(self._stop))
        return self

    async def _halt_when_stopped(self, stop: asyncio.Event) -> None:
        await stop.wait()
        await self.halt("stopped (@bot stop or shutdown)")

    async def __aexit__(self, *exc_info: object) -> None:
        if self._timer:
            self._timer.cancel()
        if self._stop_watch:
            self._stop_watch.cancel()
        self._closed = True
        await self._end_running()  # before the server's stop, which gives open calls only a moment
        await self._progress.flush()
        if self._server:
            await self._server.stop()

    async def _end_running(self) -> None:
        """Kill and reap every `run` sandbox still running: however the episode ends (Ctrl-C in
        `bot run`, a worker's shutdown cancelling the job), none outlives its bridge."""
        for process in list(self._running):
            with contextlib.suppress(Exception):
                await process.kill()

    # the brake ---------------------------------------------------------------

    def halt(self, reason: str) -> asyncio.Future:
        """Refuse every later call, kill what runs, tell the runner; recorded once.
        Returns a future that is done once the kills are through (await it or not)."""
        loop = asyncio.get_running_loop()
        if self.halted is not None:
            done = loop.create_future()
            done.set_result(None)
            return done
        self.halted = reason
        self.recorder.record(self.run_id, Tier.ENFORCED, "halt", outcome="halted", raw=reason)
        return loop.create_task(self._stop_everything(reason))

    async def _stop_everything(self, reason: str) -> None:
        await self._end_running()
        if self._on_halt is not None:
            result = self._on_halt(reason)
            if inspect.isawaitable(result):
                await result

    # MCP ---------------------------------------------------------------------

    def _mcp_app(self) -> ASGIApp:
        server = Server(SERVER_NAME, version="1", on_list_tools=self._list_tools,
                        on_call_tool=self._call_tool_handler)
        return server.streamable_http_app(stateless_http=True, host="127.0.0.1")

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        self.connected.set()
        self.tools_listed += 1
        return types.ListToolsResult(tools=[
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.schema)
            for tool in self._offered()])

    def _offered(self) -> tuple[Tool, ...]:
        return catalog.offered(review=self.review is not None, labels=self.labels is not None)

    async def _call_tool_handler(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await self.call_tool(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    async def call_tool(self, name: str, args: dict) -> tuple[str, bool]:
        """Admit, execute and record one call; returns (text for the model, is_error)."""
        started, printed = time.perf_counter(), self.stdout.written()
        detail: dict = {}
        try:
            tool = self._admitted(name, args)
            text, detail = await tool.handle(self._tools, args)
            outcome, is_error = "ok", False
        except Refusal as refusal:
            text, outcome, is_error = f"refused: {refusal.message}", f"refused:{refusal.code}", True
            detail = {"reason": refusal.message}
        except ToolFailure as failure:
            text, outcome, is_error = f"error: {failure}", "error", True
            detail = {"reason": str(failure)}
        except Exception as exc:  # an unexpected failure is still a recorded call, never a dropped one
            log.exception("bridged %s failed", name)
            text, outcome, is_error = f"error: {name} failed ({type(exc).__name__}: {exc})", "error", True
            detail = {"reason": f"{type(exc).__name__}: {exc}"}
        duration = elapsed_ms(started)
        metrics.BRIDGE_CALLS.labels(name if catalog.find(name) else "unknown",
                                    metrics.bridge_outcome(outcome)).inc()
        if "path" not in detail and isinstance(args.get("path"), str):
            detail["path"] = args["path"]
        if unread := await self.stdout.reached(printed, self._catch_up_s):
            log.warning("bridged %s recorded with %d bytes of the CLI's earlier stdout unread", name, unread)
            detail["stdout_unread_bytes"] = unread  # the lines before the call may follow its event
        seq = self.recorder.enforced(self.run_id, name, args, outcome=outcome,
                                     duration_ms=duration, detail=detail)
        await self.recorder.flushed(self.run_id)  # the call is answered once its record is durable
        self.calls.append({"seq": seq, "tool": name, "outcome": outcome, "duration_ms": duration,
                           **{k: v for k, v in detail.items() if k in ("path", "exit_code")}})
        return self.recorder.redact(text), is_error

    def _admitted(self, name: str, args: dict) -> Tool:
        """The tool called, once the halt, what it needs (a review, a grant to label), its schema and
        the call budget let it run."""
        if self.halted is not None:
            raise halted_refusal(self.halted)
        known = catalog.find(name)
        if known is not None and known.review_only and self.review is None:
            raise Refusal("unknown_tool", f"there is no tool {name!r} outside a review.")
        if known is not None and known not in self._offered():
            raise Refusal("unknown_tool", f"there is no tool {name!r} in this run: it was not granted.")
        tool = catalog.check_arguments(name, args)
        self.policy.charge_call()
        return tool

    def _track_run(self, process: Any | None) -> None:
        if process is None:
            self._running.clear()
        else:
            self._running.add(process)
            if self.halted is not None or self._closed:  # halted or ended while it started
                asyncio.get_running_loop().create_task(process.kill())


class _BearerGuard:
    """401 for any HTTP request without this episode's bearer token."""

    def __init__(self, app: ASGIApp, bridge: BridgeServer) -> None:
        self._app = app
        self._bridge = bridge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            self._bridge.rejected_requests += 1
            body = json.dumps({"error": "unauthorized"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        expected = f"Bearer {self._bridge.token}".encode()
        for key, value in scope.get("headers", []):
            if key == b"authorization":
                return hmac.compare_digest(value, expected)
        return False
