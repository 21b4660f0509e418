"""Noisy neighbour: one `bot serve`, and the same paced deliveries to other threads while it is
quiet and while one episode floods its stdout at full speed (a stand-in Codex CLI,
tests/ops/flood_cli.py, under sandbox tier 0): webhook ack p99 and delivery → 👀 p99 of each,
and the flood's over the quiet one as a ratio (aim ≤ 1.2×).

Two floods: one endless line (the shape that once froze the event loop) and small JSON lines
(each one parsed, recorded and shown to the tracking comment).

A p99 is a phase's few slowest acks, so the bench keeps what is not the service out of them: every
delivery of a service goes through one kept-alive HTTP/1.1 connection (a client that costs the
bench process next to nothing, not an HTTP library's machinery per request), each phase starts
with WARMUP deliveries that are not counted (a phase's first requests pay for its cold paths), and
a phase has DELIVERIES acks, so its p99 is not just its second-slowest.
"""
from __future__ import annotations

import http.client
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench import aims
from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stats import p50_p99_ms  # noqa: E402
from tests.ops.flood_cli import Flood  # noqa: E402
from tests.ops.soak import _comment_payload  # noqa: E402
from tests.spine.helpers import signed  # noqa: E402
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env  # noqa: E402

DELIVERIES = pick(100, 4)  # per phase, each to its own thread
WARMUP = pick(5, 1)  # sent first in each phase, not counted
PACE_S = 0.25  # as before the bench counted more acks: the same load on the service
FLOODING_AFTER = {"line": pick(64 << 20, 1 << 20), "lines": pick(4 << 20, 64 << 10)}  # written before the deliveries start
REACTIONS = r"/issues/comments/\d+/reactions$"
QUIET_REPO = "Codertocat/Quiet"


class _Client:
    """One kept-alive HTTP/1.1 connection to a service for all its deliveries (reopened if the
    service closes it): a client per delivery, or an HTTP library's work per request, would add
    its own cost, and its own swings, to every ack."""

    def __init__(self, service: Service):
        self.service = service
        parts = urlsplit(service.url)
        self._connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)

    def post(self, body: bytes, headers: dict[str, str]) -> int:
        try:
            return self._post(body, headers)
        except (http.client.RemoteDisconnected, ConnectionError):
            self._connection.close()
            return self._post(body, headers)

    def _post(self, body: bytes, headers: dict[str, str]) -> int:
        self._connection.request("POST", "/webhook", body, {**self.service.headers, **headers})
        response = self._connection.getresponse()
        response.read()
        return response.status

    def close(self) -> None:
        self._connection.close()


def _phase(gh, client: _Client, first_issue: int) -> tuple[list[float], list[float]]:
    """Acks and delivery → 👀 delays (seconds) of DELIVERIES comments on fresh threads, after WARMUP
    more that are not counted, all through the service's one `client`."""
    sent: dict[int, float] = {}
    acks = []
    for n, number in enumerate(range(first_issue, first_issue + WARMUP + DELIVERIES)):
        gh.add_issue(QUIET_REPO, number, user="Codertocat")
        comment_id = 100_000 + number
        gh.add_comment(QUIET_REPO, number, "@bot codex hello", user="Codertocat", comment_id=comment_id)
        body, headers = signed(_quiet_payload(number, comment_id), "issue_comment")
        at, started = time.time(), time.perf_counter()
        assert client.post(body, headers) == 202
        if n >= WARMUP:
            acks.append(time.perf_counter() - started)
            sent[comment_id] = at
        time.sleep(PACE_S)
    gh.wait_for(lambda: all(_eyes_at(gh, cid) is not None for cid in sent), 300)
    return acks, [_eyes_at(gh, cid) - at for cid, at in sent.items()]


def _quiet_payload(number: int, comment_id: int) -> dict:
    """A comment on QUIET_REPO, which has no remote: its job fails right after its 👀, so the
    figure is the service's latency, not a queue of episodes."""
    data = _comment_payload(number, comment_id, "@bot codex hello")
    name = QUIET_REPO.split("/")[1]
    data["repository"].update(full_name=QUIET_REPO, name=name, id=data["repository"]["id"] + 1)
    data["issue"]["url"] = f"https://api.github.com/repos/{QUIET_REPO}/issues/{number}"
    data["issue"]["repository_url"] = f"https://api.github.com/repos/{QUIET_REPO}"
    return data


def _eyes_at(gh, comment_id: int) -> float | None:
    return next((c.at for c in gh.calls_to("POST", REACTIONS) if int(c.path.split("/")[-2]) == comment_id), None)


def _flooded(gh, service: Service, client: _Client, flood: Flood, first_issue: int,
             flood_issue: int) -> tuple[tuple, str]:
    """The deliveries' figures while `flood` runs, and how fast the service took the flood in."""
    flood.arm()
    gh.add_issue(REPO, flood_issue, user="Codertocat")
    comment_id = 100_000 + flood_issue
    gh.add_comment(REPO, flood_issue, "@bot codex flood", user="Codertocat", comment_id=comment_id)
    service.deliver(_comment_payload(flood_issue, comment_id, "@bot codex flood"))
    flood.wait_flooding()
    events, started = _recorded(service), time.monotonic()
    try:
        figures = _phase(gh, client, first_issue)
        assert not flood.done(), "the flood ended before the deliveries did"
    finally:
        flood.stop()
    recorded = (_recorded(service) - events) / (time.monotonic() - started)
    if flood.kind == "lines":  # its backlog (the reader's buffer) outlasts the bench: not waited for
        return figures, f"{recorded:.0f} small lines/s parsed and recorded"
    flood.wait_done(300)
    read = (int((flood.folder / "done").read_text()) - flood.flooding_after) / (time.monotonic() - started)
    return figures, f"{read / 2**20:.0f} MiB/s of one line"


def _recorded(service: Service) -> int:
    """The run events stored so far (the service's own SQLite database, read-only)."""
    path = Path(service.env["BOT_DATA_DIR"]) / "bot.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM run_events").fetchone()[0]


def _aims(label: str, figures: tuple[list[float], list[float]], quiet: tuple[list[float], list[float]]) -> None:
    for index, what in ((0, "ack"), (1, "👀")):
        flood, calm = p50_p99_ms(figures[index])[1], p50_p99_ms(quiet[index])[1]
        aims.record(f"another thread's {what} p99, flood ({label}) ÷ quiet", flood / calm, at_most=1.2,
                    floor=f"quiet p99 {calm:.1f} ms")


def _line(label: str, figures: tuple[list[float], list[float]], quiet: tuple[list[float], list[float]]) -> str:
    (ack50, ack99), (eyes50, eyes99) = p50_p99_ms(figures[0]), p50_p99_ms(figures[1])
    base_ack, base_eyes = p50_p99_ms(quiet[0])[1], p50_p99_ms(quiet[1])[1]
    return (f"{label:<26} ack p50 {ack50:7.1f} p99 {ack99:7.1f} ms ({ack99 / base_ack:4.2f}x)   "
            f"👀 p50 {eyes50:7.1f} p99 {eyes99:7.1f} ms ({eyes99 / base_eyes:4.2f}x)")


def run() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-noisy-") as tmp:
        base = Path(tmp)
        gh = seeded_github()
        gh.add_repo(QUIET_REPO)
        gh.set_permission(QUIET_REPO, "Codertocat", "admin")
        floods = {kind: Flood(base / f"flood-{kind}", kind=kind, flooding_after=FLOODING_AFTER[kind])
                  for kind in ("line", "lines")}
        env = service_env(base, gh, make_remote(base), "http://127.0.0.1:9", BOT_SANDBOX_TIER="0",
                          BOT_WORKERS="4", BOT_CODEX_BIN=str(floods["line"].cli), BOT_LOG_LEVEL="WARNING")
        results, rates = {}, {}
        try:
            for kind in ("line", "lines"):
                env["BOT_CODEX_BIN"] = str(floods[kind].cli)
                service = Service(env, base / f"serve-{kind}.log").start()
                client = _Client(service)
                try:
                    results[f"quiet ({kind} run)"] = _phase(gh, client, 1000 * len(results) + 10)
                    results[kind], rates[kind] = _flooded(gh, service, client, floods[kind],
                                                          1000 * len(results) + 10, 1000 * len(results) + 5)
                finally:
                    client.close()
                    service.stop()
        finally:
            gh.stop()
    for kind, label in (("line", "one endless line"), ("lines", "small JSON lines")):
        _aims(label, results[kind], results[f"quiet ({kind} run)"])
    return [f"{DELIVERIES} deliveries per phase (after {WARMUP} not counted), one every {PACE_S * 1000:.0f} ms, "
            "each to its own thread, through one kept-alive connection; "
            f"4 workers; the flood had written {FLOODING_AFTER['line'] >> 20} MiB (one line) or "
            f"{FLOODING_AFTER['lines'] >> 20} MiB (small lines) before they started",
            _line("quiet", results["quiet (line run)"], results["quiet (line run)"]),
            _line("flood: one endless line", results["line"], results["quiet (line run)"]),
            _line("quiet", results["quiet (lines run)"], results["quiet (lines run)"]),
            _line("flood: small JSON lines", results["lines"], results["quiet (lines run)"]),
            f"the flooding episode meanwhile: {rates['line']} (cut at 4 MiB), {rates['lines']}",
            "ratios: the flood's p99 over the quiet p99 of the same service (aim <= 1.2x)"]


if __name__ == "__main__":
    print("\n".join(run()))
