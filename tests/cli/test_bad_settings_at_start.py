"""Every configuration variable has a kind, and a bad value of any of them is refused at the start
of `bot serve`, `bot run` and `bot doctor`: one line naming the variable, the value's problem and an
example, exit 2, before anything is done (no data dir, no traceback)."""
from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapters import base
from bot import config
from bot.cli import main as cli
from bot.config import kinds as config_kinds

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "configuration.md"
MISSING = "/nonexistent/bot-test/missing"
BAD = {config_kinds.Whole: "abc", config_kinds.Number: "abc", config_kinds.Flag: "maybe",
       config_kinds.Choice: "abc", config_kinds.Url: "example.com", config_kinds.HostName: "http://host:1",
       config_kinds.HostPort: "nowhere", config_kinds.Size: "lots", config_kinds.ExistingPath: MISSING,
       config_kinds.Folder: str(DOC), config_kinds.Pattern: "not this!"}
COMMANDS = {"serve": ("serve",), "run": ("run", "hello"), "doctor": ("doctor",)}


def documented_names() -> list[str]:
    names = re.findall(r"^\| `([A-Z_<>]+)` \|", DOC.read_text(), re.M)
    return [n.replace("<AGENT>", a.upper()) for n in names for a in (base.names() if "<AGENT>" in n else ("",))]


def checked_cases() -> list[tuple[str, str]]:
    kinds = {v.name: v.kind for v in config.VARIABLES}
    cases = []
    for name in documented_names():
        kind = kinds.get(name) or kinds[re.sub(r"^BOT_[A-Z]+_", "BOT_<AGENT>_", name)]
        if kind.checked:
            cases.append((name, BAD[type(kind)]))
    return cases


def test_every_variable_declares_a_kind_and_cannot_be_made_without_one():
    assert [v.name for v in config.VARIABLES if not isinstance(v.kind, config_kinds.Kind)] == []
    kind = next(f for f in dataclasses.fields(config.Variable) if f.name == "kind")
    assert kind.default is dataclasses.MISSING and kind.default_factory is dataclasses.MISSING


def test_every_checked_kind_has_a_bad_value_here():
    kinds = {type(v.kind) for v in config.VARIABLES if v.kind.checked}
    assert kinds <= set(BAD)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("name", "bad"), checked_cases())
def test_a_bad_value_is_refused_in_one_line_before_anything_runs(tmp_path, command, name, bad):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "GITHUB_", "CODEX_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), BOT_DATA_DIR=str(tmp_path / "data"))
    env[name] = bad
    done = subprocess.run([sys.executable, "-m", "bot.cli", *COMMANDS[command]], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL)
    first = (done.stderr.splitlines() or [""])[0]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert first == f"bot {command}: {config.check_all({name: bad})[0]}"
    assert first.startswith(f"bot {command}: {name}=") and f", e.g. {name}=" in first
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(("name", "bad"), checked_cases())
def test_the_example_in_a_refusal_is_itself_accepted(name, bad):
    line = config.check_all({name: bad})[0]
    example = line.rsplit(f", e.g. {name}=", 1)[1]
    kind = type(next(v.kind for v in config.VARIABLES if v.name == name or
                     v.name == re.sub(r"^BOT_[A-Z]+_", "BOT_<AGENT>_", name)))
    if kind is not config_kinds.ExistingPath:  # an example path is not on this machine
        assert config.check_all({name: example}) == []


@pytest.mark.parametrize(("name", "bad", "line"), [
    ("BOT_PORT", "abc", "BOT_PORT='abc': not a port number (1-65535), e.g. BOT_PORT=8000"),
    ("BOT_LOG_LEVEL", "LOUD",
     "BOT_LOG_LEVEL='LOUD': not a log level (DEBUG, INFO, WARNING, ERROR, CRITICAL), e.g. BOT_LOG_LEVEL=INFO"),
    ("BOT_LIMIT_WORKTREE", "lots", "BOT_LIMIT_WORKTREE='lots': not a size from 64MiB to 64GiB (bytes, or a number "
     "with KiB, MiB, GiB or TiB), e.g. BOT_LIMIT_WORKTREE=1GiB"),
    ("GITHUB_PRIVATE_KEY_PATH", MISSING, f"GITHUB_PRIVATE_KEY_PATH='{MISSING}': no such file, "
     "e.g. GITHUB_PRIVATE_KEY_PATH=/path/to/app.private-key.pem"),
    ("GITHUB_APP_ID", "abc", "GITHUB_APP_ID='abc': not a GitHub App id (a whole number: App settings → About), "
     "e.g. GITHUB_APP_ID=123456"),
    ("BOT_PUBLIC_URL", "example.com", "BOT_PUBLIC_URL='example.com': not a URL starting with https:// or http://, "
     "e.g. BOT_PUBLIC_URL=https://bot.example.com"),
    ("BOT_SANDBOX_TIER", "abc", "BOT_SANDBOX_TIER='abc': not a sandbox tier (1: bubblewrap, 0: process jail, "
     "for tests), e.g. BOT_SANDBOX_TIER=1"),
    ("BOT_CODEX_BASE_URL", "not-a-url", "BOT_CODEX_BASE_URL='not-a-url': not a URL starting with https:// or "
     "http://, e.g. BOT_CODEX_BASE_URL=https://gateway.example.com"),
])
def test_the_refusal_names_the_variable_the_problem_and_an_example(name, bad, line):
    assert config.check_all({name: bad}) == [line]


def test_a_secret_value_is_never_shown_in_a_refusal():
    lines = config.check_all({"BOT_DATABASE_URL": "mysql://bot:hunter2@db/bot"})
    assert lines == ["BOT_DATABASE_URL=(hidden): not a URL starting with postgresql://, postgres:// or sqlite://, "
                     "e.g. BOT_DATABASE_URL=postgresql://bot@db.example.com/bot"]


def test_every_bad_variable_gets_its_own_line():
    assert [line.split("=")[0] for line in config.check_all({"BOT_PORT": "x", "BOT_WORKERS": "-1"})] == \
        ["BOT_PORT", "BOT_WORKERS"]


def test_the_action_says_it_as_a_workflow_error_naming_the_input(monkeypatch, capsys):
    monkeypatch.setenv("BOT_SANDBOX_TIER", "2")
    assert cli.main(["action"]) == 2
    assert capsys.readouterr().out == (
        "::error::BOT_SANDBOX_TIER='2': not a sandbox tier (1: bubblewrap, 0: process jail, for tests), "
        "e.g. BOT_SANDBOX_TIER=1 (in the workflow: the action's `sandbox-tier` input)\n")
