"""Escape suite, shared resources: one hostile episode cannot starve the service.

Connections: the egress proxy and the bridge relay each serve at most `Limits.connections` of a
run's connections at once and refuse the rest on arrival, recorded as egress decisions; a run
flooding both leaves the bot's descriptors to everyone else. The service raises its own
descriptor soft limit to the hard limit at start. Disk: the writable worktree may grow by
`Limits.worktree_growth_bytes`, the CLI home hold `Limits.home_bytes`, /tmp is a tmpfs of
`Limits.tmpfs_bytes`; past a quota the episode is stopped with the reason.
"""
from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from adapters.base import Episode
from sandbox.base import Limits
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current
from tests.sandbox.shell_adapter import ShellAdapter

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[2]

HOLD_THEN_OVERFLOW = """
import json, socket, sys
port, cap, extra = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(cap)]
answers = []
for _ in range(extra):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    try:  # a refused relay connection is closed unread: EOF or a reset
        s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n") if port != 3128 else None
        answers.append(s.recv(4096).decode("latin-1"))
    except ConnectionResetError:
        answers.append("")
print(json.dumps(answers), flush=True)
"""

FLOOD = """
import socket, sys, time
held, failed = [], []
for port in (3128, 8765):
    for i in range(int(sys.argv[1])):
        s = socket.socket()
        s.settimeout(20)
        try:
            s.connect(("127.0.0.1", port))
        except OSError as exc:
            failed.append(f"{port}:{i}:{exc}")
            break
        held.append(s)
for port in (3128, 8765):  # accepted in order: once this one is answered and closed, the bot
    s = socket.create_connection(("127.0.0.1", port), timeout=30)  # has dealt with all before it
    try:
        while s.recv(4096):
            pass
    except ConnectionResetError:
        pass
print(f"holding {len(held)} failed {failed}", flush=True)
time.sleep(120)
"""


def _python(script: str, *args) -> str:
    return "python3 -c '" + script.replace("'", "'\"'\"'") + "' " + " ".join(map(str, args))


async def _held_server():
    """A loopback server that answers a request only once its head has arrived (so a relayed
    connection that sends nothing stays open)."""
    async def answer(reader, writer):
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nserved")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
    return await asyncio.start_server(answer, "127.0.0.1", 0)


# -- connections ------------------------------------------------------------------------------

async def test_proxy_refuses_connections_beyond_the_run_cap_with_the_reason_recorded(run):
    """With 4 connections held open, the next 3 are answered 503 connection-limit at once, and
    each refusal is an egress decision with that reason."""
    ran = await run(_python(HOLD_THEN_OVERFLOW, 3128, 4, 3), limits=Limits(connections=4, timeout_s=60))
    answers = json.loads(ran.out)
    assert [a.split("\r\n")[0] for a in answers] == ["HTTP/1.1 503 Service Unavailable"] * 3
    assert all("X-Proxy-Error: connection-limit" in a for a in answers)
    assert ran.reasons() == ["connection-limit"] * 3


async def test_bridge_relay_refuses_connections_beyond_the_run_cap_with_the_reason_recorded(run):
    """With 4 relayed connections held open to the bridge, the next 3 are closed unserved and
    recorded as connection-limit decisions naming the bridge's address."""
    server = await _held_server()
    port = server.sockets[0].getsockname()[1]
    try:
        ran = await run(_python(HOLD_THEN_OVERFLOW, 8765, 4, 3), limits=Limits(connections=4, timeout_s=60),
                        bridge_upstream=("127.0.0.1", port))
    finally:
        server.close()
    assert json.loads(ran.out) == ["", "", ""], ran.err
    assert [(d.host, d.port, d.allowed, d.reason) for d in ran.egress] == [("127.0.0.1", port, False,
                                                                            "connection-limit")] * 3


RELEASE_THEN_CONNECT = """
import socket, time
held = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(4)]
for s in held:
    s.close()
for attempt in range(200):  # the proxy sees the closes a moment later
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT blocked.example:443 HTTP/1.1\\r\\n\\r\\n")
    answer = s.recv(4096).decode()
    if "connection-limit" not in answer:
        break
    time.sleep(0.05)
print(answer.split("\\r\\n")[0])
"""


async def test_connections_closed_below_the_cap_free_their_slots(run):
    """The cap counts connections open now, not connections ever made: once the held ones close,
    a new CONNECT gets the policy's answer again."""
    ran = await run(_python(RELEASE_THEN_CONNECT), limits=Limits(connections=4, timeout_s=60))
    assert ran.out.strip() == "HTTP/1.1 403 Forbidden"
    assert ran.reasons()[-1] == "blocked-by-allowlist"


@pytest.fixture
def few_descriptors():
    """The bot process with a soft descriptor limit of 512 (restored after): what 1,100
    connections of one episode used to exhaust."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
    yield 512
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_one_run_flooding_connections_leaves_another_run_served(config, few_descriptors):
    """A run opening 1,100 connections to its proxy and 1,100 to its bridge relay (and keeping
    them) takes only its cap of the bot's descriptors; a second run started meanwhile reaches its
    bridge and is answered."""
    server = await _held_server()
    port = server.sockets[0].getsockname()[1]
    spawner = Tier1Spawner(host=current().sandbox_host)
    idle_fds = len(os.listdir("/proc/self/fd"))
    hostile = await spawner.start(replace(config, bridge_upstream=("127.0.0.1", port),
                                          limits=replace(config.limits, timeout_s=120)),
                                  ["sh", "-c", _python(FLOOD, 1100)], {})
    try:
        flooded = (await asyncio.wait_for(hostile.stdout.readline(), 60)).decode()
        assert flooded.startswith("holding 2200"), flooded
        bot_fds = len(os.listdir("/proc/self/fd"))
        other = await spawner.start(replace(config, bridge_upstream=("127.0.0.1", port)),
                                    ["python3", "-c", "import urllib.request as u; "
                                     "print(u.urlopen('http://127.0.0.1:8765/', timeout=20).read().decode())"], {})
        out, err = await asyncio.gather(other.stdout.read(), other.stderr.read())
        assert (await other.wait(), out.decode().strip()) == (0, "served"), err.decode()
    finally:
        await hostile.kill()
        server.close()
    # the cap bounds what the run holds of this process: a descriptor per proxied connection
    # waiting for its request, three per relayed one (both ends of the relay and the held
    # server's, which runs here too), a few for the sandbox itself
    assert bot_fds - idle_fds <= 4 * Limits().connections + 32 < few_descriptors
    assert "connection-limit" in {d.reason for d in hostile.egress}


async def test_refusals_past_the_record_bound_are_counted_not_stored(tmp_path):
    """A run refused without end keeps a bounded record: past the bound, refusals are only counted."""
    from sandbox.egress import EgressProxy, Policy
    decisions: list = []
    proxy = EgressProxy(Policy.build([]), decisions, tmp_path / "egress.jsonl", max_recorded=50)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for _ in range(200):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"CONNECT blocked.example:443 HTTP/1.1\r\n\r\n")
            await reader.read()
            writer.close()
    finally:
        server.close()
    assert len(decisions) == 51 and decisions[-1].reason == "decision-record-full"
    assert proxy.unrecorded == {"blocked-by-allowlist": 150}
    assert len((tmp_path / "egress.jsonl").read_text().splitlines()) == 51


# -- the service's own descriptors --------------------------------------------------------------

def _python_child(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """An interpreter and environment for a child `bot` process with this process's imports. The
    unprivileged run of this suite may not be able to exec sys.executable (a venv pointing into
    /root); the system python3 with this process's sys.path imports the same code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env |= {"BOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    if os.access(sys.executable, os.X_OK):
        return sys.executable, env
    return "/usr/bin/python3", env | {"PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, sys.path)])}


def _low_soft_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_bot_serve_raises_its_descriptor_soft_limit_to_the_hard_limit(tmp_path):
    """`bot serve` started with a soft limit of 256 runs with soft = hard."""
    port = _free_port()
    python, env = _python_child(tmp_path)
    proc = subprocess.Popen([python, "-m", "bot.cli", "serve"], cwd=ROOT, env=env | {"BOT_PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_low_soft_limit)
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
    finally:
        proc.terminate()
        proc.wait(30)
    [line] = [line for line in limits.splitlines() if line.startswith("Max open files")]
    soft, hard = line.split()[3:5]
    assert soft == hard == str(resource.getrlimit(resource.RLIMIT_NOFILE)[1])


@pytest.mark.parametrize("command", [["run", "hello", "--repo", "/nonexistent"], ["action"]])
def test_bot_run_and_action_raise_their_descriptor_soft_limit(command, tmp_path):
    """`bot run` and `bot action` raise the soft limit first thing, before any work."""
    probe = ("import resource, sys; from bot.cli import main; main.main(sys.argv[1:]); "
             "print(*resource.getrlimit(resource.RLIMIT_NOFILE))")
    python, env = _python_child(tmp_path)
    done = subprocess.run([python, "-c", probe, *command], cwd=ROOT, capture_output=True, text=True,
                          env=env, preexec_fn=_low_soft_limit, timeout=60)
    soft, hard = done.stdout.split()[-2:]
    assert soft == hard, done.stdout + done.stderr


# -- disk ---------------------------------------------------------------------------------------

FILL_FOREVER = 'i=0; while :; do head -c 1048576 /dev/zero > "{where}/fill$i"; i=$((i+1)); sleep 0.01; done'
ANSWER = 'echo \'{"text": "done"}\''


@pytest.fixture
def quick_watch(monkeypatch):
    monkeypatch.setenv("BOT_DISK_WATCH_INTERVAL", "0.1")


async def _episode(config, script: str, **limits):
    from bot.episode.runner import run_episode
    cfg = replace(config, writable=True, limits=Limits(timeout_s=60, **limits))
    episode = Episode(prompt="p", workdir=cfg.mount_path, home=cfg.home, mode="native")
    return await run_episode(ShellAdapter(script), episode, Tier1Spawner(host=current().sandbox_host), cfg,
                             disk_watch_s=current().number("BOT_DISK_WATCH_INTERVAL"))


async def test_episode_growing_the_worktree_past_its_quota_is_stopped_with_the_reason(config, quick_watch):
    """A CLI writing into the worktree without end is stopped once it grew past the quota."""
    result = await _episode(config, FILL_FOREVER.format(where="/workspace"), worktree_growth_bytes=8 << 20)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error.startswith("stopped: the worktree reached its 8 MiB disk cap (BOT_LIMIT_WORKTREE")
    assert not result.outcome["timed_out"]


async def test_episode_filling_the_cli_home_past_its_quota_is_stopped_with_the_reason(config, quick_watch):
    """A CLI filling its HOME without end is stopped once the HOME holds more than the quota."""
    result = await _episode(config, FILL_FOREVER.format(where="$HOME"), home_bytes=8 << 20)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error.startswith("stopped: the CLI home reached its 8 MiB disk cap (BOT_LIMIT_HOME")
    assert not result.outcome["timed_out"]


async def test_a_quota_passed_just_before_exit_still_fails_the_episode(config):
    """A burst written faster than the watch looks, then a clean exit: the check at the end
    catches it, so nothing the bot does next (commit, cache) takes the oversized tree."""
    script = f'head -c {16 << 20} /dev/zero > /workspace/burst; {ANSWER}'
    result = await _episode(config, script, worktree_growth_bytes=8 << 20)
    assert not result.ok
    assert result.error.startswith("stopped: the worktree reached its 8 MiB disk cap (BOT_LIMIT_WORKTREE")


async def test_a_home_over_its_quota_is_cleared_for_the_next_turn(config, quick_watch):
    """A HOME left over its quota would stop every later turn: it is emptied (the next turn
    starts a fresh session with a recap) and the answer says so."""
    result = await _episode(config, FILL_FOREVER.format(where="$HOME"), home_bytes=8 << 20)
    assert "the next turn starts a fresh session" in result.error
    assert list(config.home.iterdir()) == []


async def test_tmp_is_a_tmpfs_of_the_operators_tmp_quota(run, monkeypatch):
    """BOT_LIMIT_TMP sizes the sandbox's /tmp: writing past it fails with ENOSPC."""
    from bot.episode.turn import sandbox_limits
    from bot.workspace.repo_config import RepoLimits
    monkeypatch.setenv("BOT_LIMIT_TMP", "64MiB")
    ran = await run(f"head -c {96 << 20} /dev/zero > /tmp/big; echo rc=$?",
                    limits=replace(sandbox_limits(RepoLimits(), current()), timeout_s=60))
    assert "No space left on device" in ran.err and "rc=1" in ran.out


# -- limits from the operator and the repository ------------------------------------------------

def test_operator_environment_sets_the_caps(monkeypatch):
    """BOT_LIMIT_CONNECTIONS, _WORKTREE, _HOME and _TMP set the caps; unset, the defaults hold."""
    from bot.episode.turn import sandbox_limits
    from bot.workspace.repo_config import RepoLimits
    defaults = sandbox_limits(RepoLimits(), current())
    assert (defaults.connections, defaults.worktree_growth_bytes, defaults.home_bytes,
            defaults.tmpfs_bytes) == (64, 1 << 30, 512 << 20, 512 << 20)
    for name, value in (("CONNECTIONS", "16"), ("WORKTREE", "2GiB"), ("HOME", "256MiB"), ("TMP", "128MiB")):
        monkeypatch.setenv(f"BOT_LIMIT_{name}", value)
    limits = sandbox_limits(RepoLimits(), current())
    assert (limits.connections, limits.worktree_growth_bytes, limits.home_bytes,
            limits.tmpfs_bytes) == (16, 2 << 30, 256 << 20, 128 << 20)


def test_repository_config_lowers_a_cap_but_never_raises_it(monkeypatch):
    """`.github/bot.yml` limits may tighten the operator's caps; a larger value is held to them."""
    from bot.episode.turn import sandbox_limits
    from bot.workspace.repo_config import parse
    monkeypatch.setenv("BOT_LIMIT_HOME", "256MiB")
    cfg = parse("limits:\n  connections: 8\n  worktree: 128MiB\n  home: 4GiB\n  tmp: 64MiB\n")
    limits = sandbox_limits(cfg.limits, current())
    assert (limits.connections, limits.worktree_growth_bytes, limits.home_bytes,
            limits.tmpfs_bytes) == (8, 128 << 20, 256 << 20, 64 << 20)


# -- how usage is counted -----------------------------------------------------------------------

def test_usage_never_follows_a_symlink(tmp_path):
    """A link to a big folder elsewhere counts as the link, not as what it points to."""
    from sandbox.disk import usage
    outside, root = tmp_path / "outside", tmp_path / "root"
    outside.mkdir()
    root.mkdir()
    (outside / "big").write_bytes(b"x" * (16 << 20))
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "file-link").symlink_to(outside / "big")
    assert usage(root) < 1 << 20


def test_a_sparse_file_counts_at_its_apparent_size(tmp_path):
    """A sparse file counts at its length: a copy or pack of the home would write it out."""
    from sandbox.disk import usage
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(1 << 30)
    assert usage(tmp_path) >= 1 << 30


def test_hard_links_count_once(tmp_path):
    """Ten names for one 8 MiB file are 8 MiB."""
    from sandbox.disk import usage
    (tmp_path / "one").write_bytes(b"x" * (8 << 20))
    for n in range(9):
        os.link(tmp_path / "one", tmp_path / f"link{n}")
    assert usage(tmp_path) < 9 << 20


def test_a_tree_nested_past_the_depth_cap_is_an_error(tmp_path):
    """Folders nested deeper than the watch walks are reported, never silently skipped."""
    from sandbox.disk import MAX_DEPTH, TooDeep, usage
    deep = tmp_path.joinpath(*["d"] * (MAX_DEPTH + 2))
    deep.mkdir(parents=True)
    with pytest.raises(TooDeep):
        usage(tmp_path)
