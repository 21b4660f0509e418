"""End to end: each real agent CLI at its default model (none configured), in a tier-1 sandbox,
driven by the fake provider to call the bridge's tools through the runner; the record and the
provenance are checked afterwards.

One scripted episode per CLI (module-scoped, it costs a few seconds) feeds several tests.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters import base as adapters
from bot.bridge.admission import Admission
from bot.bridge.server import TOOL_NAMES as TOOLS
from bot.bridge.server import BridgeServer
from bot.bridge.tools import sandbox_for_run
from bot.episode import honesty
from bot.episode.runner import run_episode
from bot.record import provenance
from bot.record.recorder import Recorder
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.bridge.conftest import git
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call, resolve_tool, say
from tests.fakes.provider import bridged as bridge_call

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

AGENTS = tuple(adapters.names())
AGENTS_DIR = Path(__file__).resolve().parents[2] / "agents-cli"
FAKE_KEY = "sk-fake-e2e-key-0123456789"
APP = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = ("import unittest\nfrom app import add\n\n\nclass T(unittest.TestCase):\n"
         "    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n")
SCRIPT = (call("save_file", {"path": "hello.txt", "content": "hi from the agent\n"}),
          call("edit_file", {"path": "app.py", "old_string": "return a - b", "new_string": "return a + b"}),
          call("save_file", {"path": "../outside", "content": "escaped"}),
          call("save_file", {"path": ".git/config", "content": "[core]\n"}),
          call("save_file", {"path": ".github/workflows/x.yml", "content": "on: push\n"}),
          call("run", {"command": "python3 -m unittest -v 2>&1"}),
          say("All done."))
EXPECTED_OUTCOMES = [("save_file", "ok"), ("edit_file", "refused:ambiguous"),
                     ("save_file", "refused:outside"), ("save_file", "refused:git_dir"),
                     ("save_file", "refused:protected"), ("run", "ok")]


@dataclass
class Episode:
    result: object
    recorder: Recorder
    run_id: str
    worktree: Path
    fake: FakeProvider
    bridge: BridgeServer


def make_worktree(root: Path) -> Path:
    worktree = root / "worktree"
    worktree.mkdir(parents=True)
    git(worktree, "init", "-q", "-b", "main")
    (worktree / "app.py").write_text(APP)
    (worktree / "test_app.py").write_text(TESTS)
    git(worktree, "add", ".")
    git(worktree, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
    return worktree


async def run_scripted(agent: str, root: Path, script, *, bridge_hook=None, dead_bridge: bool = False,
                       prepare=None, read_dirs: tuple[str, ...] = ()):
    """One strict-mode episode of `agent` against the fake provider, recorded like the pipeline does
    (`prepare(worktree)` adds to the worktree first)."""
    adapter = adapters.get(agent, current().operator_for(agent))
    worktree = make_worktree(root)
    if prepare:
        prepare(worktree)
    recorder = Recorder(root / "bot.db", secrets=[FAKE_KEY])
    run_id = recorder.start_run(agent=agent, conversation="octo/repo#12", sandbox_tier=1)
    for gap in adapter.unobserved:
        recorder.declare_gap(run_id, gap)
    policy = Admission(worktree)
    kill = asyncio.Event()
    with FakeProvider() as fake:
        fake.script(*script)
        async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=root / "scratch",
                                run_sandbox=sandbox_for_run(worktree, policy, tier=1, host=current().sandbox_host),
                                on_progress=lambda md: bridge_hook(bridge) if bridge_hook else None,
                                on_halt=lambda reason: kill.set(), progress_interval_s=0,
                                read_dirs=read_dirs) as bridge:
            spawner = Tier1Spawner(host=current().sandbox_host)
            upstream = ("127.0.0.1", free_port()) if dead_bridge else ("127.0.0.1", bridge.port)
            config = SandboxConfig(workdir=worktree, home=root / "home", ro_binds=(AGENTS_DIR, *read_dirs),
                                   gateways=(f"127.0.0.1:{fake.port}",), bridge_upstream=upstream,
                                   allowed_hosts=adapter.default_allowed_hosts,
                                   limits=Limits(timeout_s=120), tmpdir=root / "home" / ".tmp")
            episode = adapters.Episode(
                prompt="Fix the adder.", workdir=config.mount_path, home=config.home,
                bridge=bridge.bridge_for(spawner.inside_bridge_url(config)), base_url=fake.url, read_dirs=read_dirs,
                credentials=adapters.Credentials(env={adapter.credential_env[0]: FAKE_KEY}))
            result = await run_episode(adapter, episode, spawner, config, cancel=kill,
                                       on_event=lambda event: recorder.attest(run_id, event),
                                       bridge_connected=bridge.connected)
    recorder.attach_egress(run_id, result.egress)
    recorder.finish_run(run_id, "ok" if result.ok else "failed")
    return Episode(result, recorder, run_id, worktree, fake, bridge)


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module", params=AGENTS)
def episode(request, tmp_path_factory) -> Episode:
    root = tmp_path_factory.mktemp(f"e2e-{request.param}")
    return asyncio.run(run_scripted(request.param, root, SCRIPT))


def bridged(episode: Episode) -> list[tuple[str, str]]:
    return [(e["tool"], e["outcome"]) for e in episode.recorder.events(episode.run_id) if e["kind"] == "tool_call"]


def test_default_model_is_offered_every_bridge_tool(episode):
    """The CLI's default model is offered each of the bridge's tools as one it can call at once."""
    offered = episode.fake.main_requests()[0].offered_tools
    assert [tool for tool in TOOLS if not resolve_tool(f"@bot/{tool}", offered)] == [], offered


def test_cli_listed_the_bridge_tools(episode):
    """The CLI asked the bridge for its tools (the count honest failure relies on)."""
    assert episode.bridge.tools_listed >= 1


def test_episode_finishes_ok(episode):
    """The CLI finished its turn and answered with the scripted text."""
    assert episode.result.ok, (episode.result.error, episode.result.stderr_tail[-2000:])
    assert "All done." in episode.result.text


def test_every_scripted_call_went_through_the_bridge_in_order(episode):
    """Each tool call the model made is one enforced event, with the expected outcome."""
    assert bridged(episode) == EXPECTED_OUTCOMES


def test_save_file_landed_in_the_worktree(episode):
    """The admitted save_file created the file in the worktree."""
    assert (episode.worktree / "hello.txt").read_text() == "hi from the agent\n"


def test_refused_writes_changed_nothing(episode):
    """The ambiguous edit and the three forbidden writes left no trace."""
    assert (episode.worktree / "app.py").read_text() == APP
    assert not (episode.worktree.parent / "outside").exists()
    assert not (episode.worktree / ".github").exists()
    assert "escaped" not in (episode.worktree / ".git" / "config").read_text()


def test_model_saw_the_refusal_reasons(episode):
    """The refusals reached the model as tool results it can act on."""
    results = " ".join(r.tool_result or "" for r in episode.fake.main_requests())
    assert "matches 2 places" in results and "inside .git/" in results and "protected path" in results


def test_run_executed_the_repository_tests_in_the_sandbox(episode):
    """`run` ran the repo's unittest suite in tier 1 and its output went back to the model."""
    run_event = [e for e in episode.recorder.events(episode.run_id) if e["tool"] == "run"][0]
    detail = json.loads(run_event["raw"])
    assert (detail["sandbox_tier"], detail["exit_code"]) == (1, 1)
    results = " ".join(r.tool_result or "" for r in episode.fake.main_requests())
    assert "Ran 1 test" in results and "FAILED" in results


def test_every_cli_event_is_recorded_attested_with_raw_line(episode):
    """Each event the runner parsed is one attested row carrying the CLI's own line."""
    attested = [e for e in episode.recorder.events(episode.run_id) if e["tier"] == "attested"]
    assert len(attested) == len(episode.result.events)
    assert [e["raw"] for e in attested] == [ev.raw.decode("utf-8", "replace") or ev.text
                                            for ev in episode.result.events]


def test_provenance_counts_equal_recorded_events(episode):
    """The comment's tier counts are exactly the recorded events."""
    prov = provenance.build(episode.recorder, episode.run_id, usage=episode.result.usage)
    counts = episode.recorder.tier_counts(episode.run_id)
    block = prov.details_block()
    assert f"| enforced | {counts['enforced']} |" in block and f"| attested | {counts['attested']} |" in block
    assert prov.tiers["unobserved"]["count"] == counts["unobserved"] == len(adapters.get(prov.agent).unobserved)
    assert "save_file ×4 (3 refused)" in block


def test_no_secret_reached_the_record(episode):
    """Neither the provider key nor the bridge token is stored anywhere in the run."""
    dump = json.dumps([episode.recorder.run(episode.run_id), episode.recorder.events(episode.run_id)])
    assert FAKE_KEY not in dump and episode.bridge.token not in dump


@pytest.mark.parametrize("agent", AGENTS)
def test_unreachable_bridge_fails_the_strict_episode(agent, tmp_path):
    """Strict mode with nothing listening behind the bridge port: a clear failure, no tool ran."""
    ran = asyncio.run(run_scripted(agent, tmp_path, (call("save_file", {"path": "x", "content": "1"}),
                                                     say("I wrote it.")), dead_bridge=True))
    assert not ran.result.ok and ran.result.failure == "bridge", ran.result.error
    assert "bridge" in ran.result.error and not (ran.worktree / "x").exists()
    honesty.require_tools(ran.result, ran.bridge.tools_listed, strict=True, bridged=True)
    assert ran.bridge.tools_listed == 0 and ran.result.error.startswith(honesty.NO_TOOLS)


@pytest.mark.parametrize("agent", AGENTS)
def test_halt_mid_episode_kills_cli_and_is_recorded(agent, tmp_path):
    """A halt while the CLI works: the CLI is killed, the later write never happens, the record shows it."""
    script = (call("report_progress", {"markdown": "- [ ] fixing"}),
              call("save_file", {"path": "late.txt", "content": "too late"}), say("done"))
    ran = asyncio.run(run_scripted(agent, tmp_path, script,
                                   bridge_hook=lambda bridge: bridge.halt("stopped by @alice")))
    kinds = [(e["kind"], e["tool"], e["outcome"]) for e in ran.recorder.events(ran.run_id)
             if e["tier"] == "enforced"]
    assert kinds[:2] == [("halt", None, "halted"), ("tool_call", "report_progress", "ok")]
    assert all(outcome != "ok" for _, tool, outcome in kinds[2:])
    assert not ran.result.ok and ran.result.failure == "cancelled"
    assert not (ran.worktree / "late.txt").exists()


# -- reading the repository through the bridge, at each CLI's default model ---------------------

READ_SCRIPT = (bridge_call("read_file", {"path": "app.py"}),
               bridge_call("read_file", {"path": "/proc/self/environ"}),
               bridge_call("read_file", {"path": "env.txt"}),
               bridge_call("list_files", {}),
               bridge_call("search", {"pattern": "def (add|sub)"}),
               say("Read it."))


def plant_environ_link(worktree: Path) -> None:
    """The anchor's leak: a repository symlink to the process environment."""
    (worktree / "env.txt").symlink_to("/proc/self/environ")


@pytest.fixture(scope="module", params=AGENTS)
def reading(request, tmp_path_factory) -> Episode:
    root = tmp_path_factory.mktemp(f"e2e-read-{request.param}")
    return asyncio.run(run_scripted(request.param, root, READ_SCRIPT, prepare=plant_environ_link))


def tool_results(episode: Episode) -> list[str]:
    return [r.tool_result for r in episode.fake.main_requests() if r.tool_result is not None]


def test_scripted_read_file_returns_the_worktree_file(reading):
    """The bridge's read_file, called by the CLI's default model, hands the file's content back."""
    assert bridged(reading)[0] == ("read_file", "ok")
    assert "def add(a, b):" in tool_results(reading)[0] and "return a - b" in tool_results(reading)[0]


def test_read_of_proc_self_environ_is_refused_every_way(reading):
    """By its path and through a repository symlink, /proc/self/environ is refused."""
    assert bridged(reading)[1:3] == [("read_file", "refused:outside"), ("read_file", "refused:symlink")]


def test_provider_never_receives_the_key_in_a_request_body(reading):
    """No request the CLI sent to the provider carries the key in its body (tool results included)."""
    bodies = [json.dumps(r.body) for r in reading.fake.requests if r.body is not None]
    assert bodies and not [b for b in bodies if FAKE_KEY in b]


def test_list_files_and_search_answer_the_model(reading):
    """list_files shows the worktree (the link unfollowed), search finds the functions."""
    assert bridged(reading)[3:] == [("list_files", "ok"), ("search", "ok")]
    listing, found = tool_results(reading)[3:5]
    assert "app.py" in listing and "/proc/self/environ (symbolic link, not followed)" in listing
    assert "app.py:1:def add(a, b):" in found and "app.py:5:def sub(a, b):" in found
    assert reading.result.ok and "Read it." in reading.result.text


# -- the thread's attachments: a read-only folder beside the worktree, read by its listed path ----

def attachments_folder(root: Path) -> Path:
    folder = root / "attachments" / "octo-repo-12"
    folder.mkdir(parents=True)
    (folder / "01-trace.log").write_text("Traceback: attached-marker-5521 at line 3\n")
    return folder


@pytest.mark.parametrize("agent", AGENTS)
def test_bridged_read_of_an_attachment_returns_it(agent, tmp_path):
    """The bridge's read_file, called by each CLI's default model with the attachment's listed
    absolute path, returns its text; /proc/self/environ and the CLI home stay refused."""
    folder = attachments_folder(tmp_path)
    script = (bridge_call("read_file", {"path": str(folder / "01-trace.log")}),
              bridge_call("read_file", {"path": "/proc/self/environ"}),
              bridge_call("read_file", {"path": str(tmp_path / "home" / ".bot" / "x")}),
              bridge_call("read_file", {"path": f"{folder}/../../home/.bot/x"}),
              say("Read it."))
    ran = asyncio.run(run_scripted(agent, tmp_path, script, read_dirs=(str(folder),)))
    assert ran.result.ok, (ran.result.error, ran.result.stderr_tail[-2000:])
    assert bridged(ran) == [("read_file", "ok")] + [("read_file", "refused:outside")] * 3
    assert "attached-marker-5521" in tool_results(ran)[0]
