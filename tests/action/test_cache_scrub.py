"""Before the Actions cache saves the data dir, every CLI home is reduced to the session state its
CLI resumes from (an allowlist per CLI); nothing else survives, and no link is ever followed."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main as cli
from tests.action.conftest import payload
from tests.entry_settings import current

KEY = '{"OPENAI_API_KEY":"sk-proj-copied-key-0000000000000001"}'
CONVERSATION = "codertocat-hello-world-1-abcd1234"
# What each pinned CLI left in its HOME after one real turn (tests/adapters/test_e2e_clis.py),
# and which of it the next turn's resume reads.
AFTER_ONE_TURN = {
    "claude": {".claude.json", ".claude/settings.json", ".claude/backups/.claude.json.backup.1",
               ".claude/.credentials.json", ".claude/projects/-workspace/3051f7a7.jsonl"},
    "codex": {".codex/auth.json", ".codex/config.toml", ".codex/state_5.sqlite", ".codex/history.jsonl",
              ".codex/logs_2.sqlite", ".codex/installation_id", ".codex/skills/.system/x/SKILL.md",
              ".codex/sessions/2026/11/30/rollout-2026-11-30T20-45-12-01a22e34.jsonl",
              ".bot/codex-last-message.txt"},
    "opencode": {".local/share/opencode/auth.json", ".local/share/opencode/log/opencode.log",
                 ".config/opencode/.gitignore", ".local/share/opencode/opencode.db",
                 ".local/share/opencode/opencode.db-wal", ".local/share/opencode/opencode.db-shm"},
    "gemini": {".gemini/oauth_creds.json", ".gemini/projects.json", ".gemini/settings.json",
               ".gemini/tmp/workspace/.project_root", ".bot/gemini-policy.toml",
               ".gemini/tmp/workspace/chats/session-2026-11-30T20-45-5044d2ab.jsonl"},
}
RESUMED_FROM = {
    "claude": {".claude/projects/-workspace/3051f7a7.jsonl"},
    "codex": {".codex/sessions/2026/11/30/rollout-2026-11-30T20-45-12-01a22e34.jsonl"},
    "opencode": {".local/share/opencode/opencode.db", ".local/share/opencode/opencode.db-wal",
                 ".local/share/opencode/opencode.db-shm"},
    "gemini": {".gemini/tmp/workspace/chats/session-2026-11-30T20-45-5044d2ab.jsonl"},
}


def _home(agent: str = "codex") -> Path:
    home = current().data_dir / "homes" / CONVERSATION / agent
    home.mkdir(parents=True, exist_ok=True)
    return home


def _write(home: Path, relative: str, text: str = "{}") -> Path:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _files(root: Path) -> set[str]:
    return {str(Path(d, f).relative_to(root)) for d, dirs, files in os.walk(root)
            for f in files + [x for x in dirs if Path(d, x).is_symlink()]}


def _action_step(runner) -> None:
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    cli.main(["action"])


@pytest.mark.parametrize("agent", sorted(AFTER_ONE_TURN))
def test_a_home_keeps_only_what_its_cli_resumes_from(github, runner, agent):
    """Credentials, settings, logs, caches and history go; the session transcript (or database) stays."""
    home = _home(agent)
    for relative in AFTER_ONE_TURN[agent]:
        _write(home, relative)
    _action_step(runner)
    assert _files(home) == RESUMED_FROM[agent]


def test_a_key_copied_elsewhere_in_a_cli_home_is_not_cached(github, runner):
    """A credential copied under any other name or folder of the home is removed too."""
    home = _home()
    planted = [_write(home, ".codex/backup/auth.json.bak", KEY), _write(home, ".config/notes.txt", KEY),
               _write(home, ".codex/sessions/2026/11/30/key.txt", KEY)]
    _action_step(runner)
    assert [p for p in planted if p.exists()] == []


def test_a_symlinked_directory_in_a_home_is_not_followed_out_of_the_data_dir(github, runner, tmp_path):
    """`.codex` planted as a link to a folder outside the data dir: the link goes, the folder's
    files (credential names included) stay untouched."""
    outside = tmp_path / "outside"
    _write(outside, "auth.json", KEY)
    _write(outside, "sessions/2026/11/30/rollout-x.jsonl")
    (_home() / ".codex").symlink_to(outside, target_is_directory=True)
    _action_step(runner)
    assert not (_home() / ".codex").is_symlink()
    assert _files(outside) == {"auth.json", "sessions/2026/11/30/rollout-x.jsonl"}


def test_a_home_that_is_a_symlink_is_removed_not_followed(github, runner, tmp_path):
    """A conversation's agent folder that is itself a link: removed, its target untouched."""
    outside = tmp_path / "outside-home"
    _write(outside, ".codex/auth.json", KEY)
    link = current().data_dir / "homes" / CONVERSATION / "codex"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    _action_step(runner)
    assert not link.is_symlink() and (outside / ".codex" / "auth.json").read_text() == KEY


def test_a_link_or_special_file_under_a_kept_name_is_removed(github, runner, tmp_path):
    """A symlink, a FIFO or a second hard link named like a session transcript is not kept."""
    home = _home("claude")
    outside = _write(tmp_path, "outside.txt", KEY)
    folder = home / ".claude" / "projects" / "-workspace"
    folder.mkdir(parents=True)
    (folder / "link.jsonl").symlink_to(outside)
    os.mkfifo(folder / "fifo.jsonl")
    os.link(_write(home, ".claude/projects/-workspace/real.jsonl", KEY), folder / "hardlink.jsonl")
    _action_step(runner)
    assert _files(home) == set() and outside.read_text() == KEY


@pytest.fixture
def scratch_home():
    """A home removed with rm -rf afterwards (pytest's own clean-up recurses, and stops at mode 000)."""
    home = _home()
    yield home
    subprocess.run(["rm", "-rf", "--", str(home)], check=True)


def test_a_deeply_nested_tree_is_removed_whole(github, runner, scratch_home):
    """A folder nested deeper than Python's recursion limit is still removed entirely."""
    home = scratch_home
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(1500):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("auth.json", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as handle:
            handle.write(KEY)
    finally:
        os.close(fd)
    _action_step(runner)
    assert os.listdir(home) == []


@pytest.mark.e2e
@pytest.mark.sandbox
@pytest.mark.parametrize("agent", sorted(AFTER_ONE_TURN))
def test_a_real_session_resumes_from_a_scrubbed_home(agent, tmp_path):
    """The allowlist is enough: after the scrub the pinned CLI resumes the same session and the
    provider sees the first turn in the history (a guard on the allowlist being too tight)."""
    from bot.episode.resume_state import scrub_homes
    from tests.adapters.test_e2e_clis import Sandboxed
    from tests.fakes.provider import FakeProvider

    with FakeProvider() as fake:
        box = Sandboxed(tmp_path, fake)
        first = asyncio.run(box.turn(agent, "Say hello"))
        homes = tmp_path / "homes"  # the data dir's layout: homes/<conversation>/<agent>
        (homes / "conversation").mkdir(parents=True)
        (tmp_path / "home" / agent).rename(homes / "conversation" / agent)
        scrub_homes(homes)
        (homes / "conversation" / agent).rename(tmp_path / "home" / agent)
        second = asyncio.run(box.turn(agent, "Second turn please", resume=first.session_id))
        assert (second.ok, second.session_id) == (True, first.session_id), second.error
        assert fake.main_requests()[-1].prior_assistant_turns == 1


def _scrub_without_permission_overrides() -> subprocess.CompletedProcess:
    """The step's scrub, run the way an unprivileged runner user runs it: permission bits apply
    (as root: without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER)."""
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*drop, sys.executable, "-c",
                           "from bot.cli.action import scrub_credential_files; from tests.entry_settings import current; "
                           "scrub_credential_files(current().data_dir)"],
                          env=os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                          capture_output=True, text=True, timeout=60)


def test_a_folder_the_agent_locked_is_still_emptied(scratch_home):
    """Folders left mode 000 or read-only by the agent are opened up (the bot owns them) and removed."""
    _write(scratch_home, ".codex/locked/auth.json", KEY)
    _write(scratch_home, ".codex/readonly/key.txt", KEY)
    (scratch_home / ".codex" / "locked").chmod(0)
    (scratch_home / ".codex" / "readonly").chmod(0o500)
    done = _scrub_without_permission_overrides()
    assert done.returncode == 0, done.stderr
    assert os.listdir(scratch_home) == []
