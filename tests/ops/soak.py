"""The fault and load suite: a burst of deliveries against a real `bot serve` (uvicorn) wired to the
fake GitHub, with duplicate deliveries, edited and bot-authored comments, `kill -9` of the service
at chosen points, and the fake GitHub failing writes. It counts what the promise is about: every
accepted command ends with exactly one terminal comment, none twice, no job lost.

    counts = Burst(threads=100, per_thread=2, kills=(0.3, 0.7)).run(tmp_dir)
    print(counts.lines())

Used by tests/ops/test_soak_e2e.py (a small burst, asserted) and bench/soak.py (the figures).
Deliveries are sent the way GitHub does: at least once (a delivery whose answer was lost to a
kill is sent again, with the same X-GitHub-Delivery), some of them twice on purpose.
"""
from __future__ import annotations

import json
import random
import re
import sqlite3
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider, fail, say
from tests.spine.helpers import app_key, payload, signed
from tests.spine.service import REPO, Service, free_port, make_remote, service_env

WORKING = "<sub>working ·"  # the tracking comment before its terminal edit
JOB_MARKER = re.compile(r"<!-- bot:job (\d+) -->")
COMMANDS = ("help", "status")  # replies; agent runs come from `episode_share`


@dataclass
class Delivery:
    event: str
    data: dict
    delivery_id: str
    command: int | None  # the comment id when this delivery carries a command we must answer


@dataclass
class Counts:
    deliveries_sent: int = 0
    episodes: int = 0
    failed_turns: int = 0
    duplicates_sent: int = 0
    ignored_sent: int = 0
    kills: int = 0
    resent_after_kill: int = 0
    accepted: int = 0
    terminal: int = 0
    answered_twice: int = 0
    duplicate_comments: int = 0
    lost: int = 0
    unfinished_jobs: int = 0
    injected_502: int = 0
    injected_rate_limits: int = 0
    slow_posts: int = 0
    burst_s: float = 0.0
    drain_s: float = 0.0
    twice: list = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"deliveries sent {self.deliveries_sent} (duplicates {self.duplicates_sent}, "
                f"edited or bot-authored {self.ignored_sent}, re-sent after a kill {self.resent_after_kill})",
                f"kill -9 of the service: {self.kills}",
                f"fake GitHub: {self.injected_502} writes answered 502, "
                f"{self.injected_rate_limits} secondary rate limits, {self.slow_posts} comments stored 6 s late; "
                f"fake provider: {self.failed_turns} turns answered 500",
                f"accepted commands {self.accepted} ({self.episodes} agent runs), terminal comments {self.terminal}",
                f"answered twice {self.answered_twice}, duplicate comments {self.duplicate_comments}, "
                f"lost {self.lost}, jobs not finished {self.unfinished_jobs}",
                f"burst {self.burst_s:.1f} s, drain after the burst {self.drain_s:.1f} s"]


@dataclass
class Burst:
    threads: int = 20
    per_thread: int = 1
    commands: tuple[str, ...] = COMMANDS
    episode_share: float = 0.0  # commands that run Codex (in the sandbox) against the fake provider
    failed_turn_share: float = 0.3  # of the episodes' model turns, answered 500 by the fake provider
    duplicate_share: float = 0.2
    ignored_share: float = 0.1
    kills: tuple[float, ...] = (0.3, 0.7)  # points of the burst (share of deliveries sent) to kill at
    write_502_share: float = 0.0
    rate_limit_share: float = 0.0
    slow_post_share: float = 0.0  # comment POSTs the fake GitHub carries out only seconds later
    seed: int = 1
    senders: int = 8
    lease_s: float = 2.0
    settle_s: float = 10.0  # BOT_POST_SETTLE_SECONDS: longer than the fake GitHub's slow posts (6 s)
    drain_timeout_s: float = 300.0
    env_extra: dict = field(default_factory=dict)

    def run(self, base: Path) -> Counts:
        rng = random.Random(self.seed)
        gh = self._github()
        remotes = make_remote(base)
        provider = FakeProvider().start()
        env = service_env(base, gh, remotes, provider.url, BOT_LEASE_SECONDS=str(self.lease_s),
                          BOT_POST_SETTLE_SECONDS=str(self.settle_s),
                          BOT_PORT=str(free_port()), **self.env_extra)
        counts = Counts()
        plan = self._plan(gh, rng, counts)
        episodes = sum(1 for d in plan if d.command is not None and "codex" in d.data["comment"]["body"])
        provider.script(*[fail(500, "injected provider failure") if rng.random() < self.failed_turn_share
                          else say("done") for _ in range(episodes * 2)])
        services: list[Service] = []
        try:
            services.append(Service(env, base / "serve-0.log"))  # listed before it starts: stopped even if it is slow to
            services[-1].start()
            started = time.monotonic()
            self._send(plan, services, env, base, counts)
            counts.burst_s = time.monotonic() - started
            drained = time.monotonic()
            self._drain(gh, base, counts)
            counts.drain_s = time.monotonic() - drained
            counts.failed_turns = sum(1 for r in provider.requests if r.reply is not None and r.reply.kind == "fail")
        finally:
            for service in services:
                service.stop()
            gh.stop()
            provider.stop()
        self._count(gh, base, plan, counts)
        return counts

    # ---- the world
    def _github(self) -> FakeGitHub:
        gh = FakeGitHub(app_id="4242", public_key=app_key()[1]).start()
        gh.add_repo(REPO)
        gh.set_permission(REPO, "Codertocat", "admin")
        for number in range(1, self.threads + 1):
            gh.add_issue(REPO, number, title=f"thread {number}", user="Codertocat")
        if self.write_502_share or self.rate_limit_share or self.slow_post_share:
            gh.flaky_writes(error_share=self.write_502_share, rate_limit_share=self.rate_limit_share,
                            seed=self.seed, slow_share=self.slow_post_share)
        return gh

    def _plan(self, gh: FakeGitHub, rng: random.Random, counts: Counts) -> list[Delivery]:
        """The deliveries in the order they are sent: each command once, some twice, and the
        ignorable ones (edits, bot-authored comments) mixed in."""
        plan: list[Delivery] = []
        for number in range(1, self.threads + 1):
            for _ in range(self.per_thread):
                body = (f"@bot codex say done, thread {number}" if rng.random() < self.episode_share
                        else f"@bot {rng.choice(self.commands)}")
                comment = gh.add_comment(REPO, number, body, user="Codertocat")
                plan.append(Delivery("issue_comment", _comment_payload(number, comment["id"], body),
                                     str(uuid.uuid4()), comment["id"]))
        for delivery in rng.sample(plan, int(len(plan) * self.duplicate_share)):
            plan.append(Delivery(delivery.event, delivery.data, delivery.delivery_id, delivery.command))
            counts.duplicates_sent += 1
        for _ in range(int(len(plan) * self.ignored_share)):
            number = rng.randint(1, self.threads)
            plan.append(self._ignorable(gh, rng, number))
            counts.ignored_sent += 1
        rng.shuffle(plan)
        return plan

    def _ignorable(self, gh: FakeGitHub, rng: random.Random, number: int) -> Delivery:
        if rng.random() < 0.5:  # an edit that adds a mention: edits are not acted on
            comment = gh.add_comment(REPO, number, "@bot help (edited in)", user="Codertocat")
            data = _comment_payload(number, comment["id"], comment["body"], name="issue_comment.edited")
        else:  # another App's comment that mentions us: never a command
            comment = gh.add_comment(REPO, number, "@bot help", user="other-app[bot]", user_type="Bot")
            data = _comment_payload(number, comment["id"], comment["body"])
            data["comment"]["user"].update(login="other-app[bot]", type="Bot")
        return Delivery("issue_comment", data, str(uuid.uuid4()), None)

    # ---- the burst
    def _send(self, plan: list[Delivery], services: list[Service], env: dict, base: Path, counts: Counts) -> None:
        """Send the plan from `senders` threads; meanwhile kill -9 the service when the share of
        the plan answered reaches each kill point, and start it again at once."""
        lock = threading.Lock()
        done = threading.Event()
        broken: list[BaseException] = []  # the killer could not start the service again
        killer = threading.Thread(target=self._killer, args=(len(plan), services, env, base, counts, done, broken))
        killer.start()
        try:
            with ThreadPoolExecutor(self.senders) as pool:
                list(pool.map(lambda d: self._deliver(d, services, lock, counts, broken), plan))
        finally:
            done.set()
            killer.join()
        if broken:
            raise broken[0]

    def _killer(self, total: int, services: list[Service], env: dict, base: Path, counts: Counts,
                done: threading.Event, broken: list[BaseException]) -> None:
        try:
            self._kill_at_points(total, services, env, base, counts, done)
        except BaseException as exc:  # the senders stop instead of retrying into a dead port
            broken.append(exc)

    def _kill_at_points(self, total: int, services: list[Service], env: dict, base: Path, counts: Counts,
                        done: threading.Event) -> None:
        for point in sorted(self.kills):
            while counts.deliveries_sent < int(point * total) and not done.is_set():
                time.sleep(0.005)
            if done.is_set():
                return
            services[-1].kill()
            counts.kills += 1
            services.append(Service(env, base / f"serve-{len(services)}.log"))
            services[-1].start()

    def _deliver(self, delivery: Delivery, services: list[Service], lock: threading.Lock, counts: Counts,
                 broken: list[BaseException]) -> None:
        body, headers = signed(delivery.data, delivery.event, delivery.delivery_id)
        for attempt in range(200):
            if broken:
                return
            try:
                response = httpx.post(f"{services[-1].url}/webhook", content=body, headers=headers, timeout=30)
            except httpx.HTTPError:  # the service is being killed or restarted: GitHub redelivers
                if attempt == 0:
                    with lock:
                        counts.resent_after_kill += 1
                time.sleep(0.2)
                continue
            if response.status_code < 500:
                with lock:
                    counts.deliveries_sent += 1
                return
            time.sleep(0.2)
        raise AssertionError(f"delivery {delivery.delivery_id} never accepted")

    # ---- after
    def _drain(self, gh: FakeGitHub, base: Path, counts: Counts) -> None:
        deadline = time.monotonic() + self.drain_timeout_s
        while time.monotonic() < deadline:
            open_jobs = _rows(base, "SELECT COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running')")[0]["n"]
            if open_jobs == 0:  # counted only after every service process has exited (run's finally)
                return
            time.sleep(0.2)

    def _count(self, gh: FakeGitHub, base: Path, plan: list[Delivery], counts: Counts) -> None:
        jobs = {row["id"]: row for row in _rows(base, "SELECT * FROM jobs ORDER BY id")}
        command_of_job = {job_id: json.loads(row["spec"])["target"]["id"] for job_id, row in jobs.items()}
        commands = {d.command for d in plan if d.command is not None}
        accepted = set(command_of_job.values())
        counts.accepted = len(accepted & commands)
        answers: dict[int, list[int]] = {}
        for number in range(1, self.threads + 1):
            for comment in gh.comments(REPO, number):
                if comment["user"]["login"] != "bot[bot]" or WORKING in (comment["body"] or ""):
                    continue  # not ours, or a tracking comment that never reached its answer
                found = JOB_MARKER.search(comment["body"] or "")
                command = command_of_job.get(int(found.group(1))) if found else None
                answers.setdefault(command if command is not None else -comment["id"], []).append(comment["id"])
        counts.terminal = sum(1 for c in commands if answers.get(c))
        counts.twice = sorted(c for c, ids in answers.items() if len(ids) > 1)
        counts.answered_twice = len(counts.twice)
        counts.duplicate_comments = sum(len(ids) - 1 for ids in answers.values())
        counts.lost = len(commands - {c for c in answers if answers[c]})
        counts.episodes = sum(1 for row in jobs.values() if row["kind"] == "episode")
        counts.unfinished_jobs = sum(1 for row in jobs.values() if row["status"] in ("queued", "running"))
        counts.injected_502, counts.injected_rate_limits = gh.injected_counts()
        counts.slow_posts = gh.injected.get("slow", 0)


def _rows(base: Path, sql: str) -> list[dict]:
    """Read the service's database directly (its SQLite file), whatever the bot's own layer is."""
    conn = sqlite3.connect(f"file:{base / 'data' / 'bot.db'}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def _comment_payload(number: int, comment_id: int, body: str, name: str = "issue_comment.created") -> dict:
    data = payload(name, body)
    data["comment"]["id"] = comment_id
    data["issue"]["number"] = number
    data["issue"]["url"] = data["issue"]["url"].rsplit("/", 1)[0] + f"/{number}"
    return data
