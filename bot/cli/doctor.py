"""`bot doctor [--json]`: can this machine run agents, and serve GitHub?

Each adapter's detect() runs the CLI's own version probe (never an episode) in a throwaway HOME
with a scrubbed environment. Whether an agent has credentials is decided by the very function a
run uses (bot.credentials.resolve), so doctor and `bot run` cannot disagree. The GitHub App's
configuration is checked with GitHub itself (a JWT for `GET /app`), with the webhook secret and
the OAuth settings of the settings page. It ends with a one-line verdict; `--json` has `ok`.
Exit status 1 when something is broken (a refused agent, a failed floor check, an App GitHub
refuses or a half-done configuration); a missing key or an App not set up at all is a finding,
not a failure.

A section is a function returning {"section", "ok", "rows": [{"check", "ok", "detail"}]}
(SECTIONS); a new area of the bot adds its own function there.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from adapters import base as adapters
from adapters.base import Adapter, ProbeFn, Readiness
from bot.cli.doctor_database import database_section
from bot.cli.doctor_wire_apis import wire_api_section
from bot.config import Settings
from bot.credentials import resolve as credentials
from bot.episode.model_channel import credential_modes
from bot.settings import app_check, manifest
from sandbox import doctor_checks
from sandbox.base import base_env

PROBE_TIMEOUT_S = 30


def probe_for(adapter: Adapter, home: Path, settings: Settings) -> ProbeFn:
    """A ProbeFn running argv with its own HOME and only the adapter's credential variables."""

    env = base_env(home, home / "tmp") | {name: value for name in adapter.credential_env
                                          if (value := settings.provider_credential(name))}
    login = adapter.operator_login
    own_home = home / Path(login.path).parent if login else None  # e.g. Codex's CODEX_HOME
    if login and own_home:
        env[login.home_variable] = str(own_home)

    def probe(argv: Sequence[str]) -> tuple[int, str]:
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        if own_home:
            own_home.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(list(argv), env=env, cwd=home, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=PROBE_TIMEOUT_S)
        except FileNotFoundError as exc:
            return 127, str(exc)
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {PROBE_TIMEOUT_S} s"
        return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")

    return probe


def agent_rows(settings: Settings, progress: Callable[[str], None] = lambda what: None) -> list[dict]:
    rows = []
    for name in sorted(adapters.names()):
        progress(f"the {name} CLI")
        adapter = adapters.get(name, settings.operator_for(name))
        with tempfile.TemporaryDirectory(prefix=f"bot-doctor-{name}-") as scratch:
            ready: Readiness = adapter.detect(probe_for(adapter, Path(scratch), settings))
        has_key, why = credential(settings, name, settings.agent_base_url(name) is not None)
        rows.append({"agent": name, "binary": adapter.binary, "available": ready.available,
                     "logged_in": has_key, "version": ready.version, "refuse": ready.refuse,
                     "reason": ready.reason if ready.refuse else why, "min_version": adapter.min_version})
    return rows


def credential(settings: Settings, agent: str, through_gateway: bool) -> tuple[bool, str]:
    """Whether a run of `agent` would find credentials, by the run's own resolution (the
    operator's environment here: a user's or a repository's key is per run), and which."""
    found = credentials.resolve(settings, agent, None, None, None)
    names = credentials.operator_env_names(settings, agent)
    gateway = f" through the gateway BOT_{agent.upper()}_BASE_URL" if through_gateway else ""
    if found is None:
        wanted = " or ".join(names) or "a key"
        return False, (f"no key: set {wanted} (also for a gateway), or connect one on the settings page"
                       if gateway else f"no key: set {wanted}, or connect one on the settings page")
    held = next((n for n in names if n in found.env), None) or ", ".join(sorted(found.files)) or "a key"
    return True, f"the operator's {held}{gateway}"


def sandbox_rows(settings: Settings) -> list[dict]:
    try:
        checks = doctor_checks(settings.sandbox_host)
    except (OSError, RuntimeError) as exc:  # a probe the host cannot run is itself a finding
        return [{"check": "sandbox checks", "ok": False, "detail": repr(exc)}]
    return [{"check": name, "ok": ok, "detail": detail} for name, ok, detail in checks]


def channel_rows(settings: Settings) -> list[dict]:
    """Per agent, the credential kinds whose model calls go through the relay and those that run
    in direct mode, the key in the sandbox (bot/episode/model_channel.py decides)."""
    return [{"agent": name, **credential_modes(name, settings)} for name in adapters.names()]


def github_section(settings: Settings) -> dict:
    """The GitHub App: id and key verified by GitHub, the webhook secret, the settings login. The
    App the first run stored in the data dir counts as `bot serve` counts it (the environment wins)."""
    rows = [app_row(settings), _set_row(settings, "webhook secret", ("GITHUB_WEBHOOK_SECRET",)),
            _set_row(settings, "settings page login (OAuth)", ("GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"))]
    configured = not all(row["unset"] for row in rows)
    return {"section": "github app", "configured": configured,
            "ok": all(row["ok"] for row in rows) if configured else None,
            "rows": [{k: v for k, v in row.items() if k != "unset"} for row in rows]}


def _as_serve_reads_them() -> Settings:
    """Unchecked (the doctor says what is wrong where `bot serve` would refuse): the environment,
    and the App the first run stored while the environment names none."""
    return manifest.with_stored_app(Settings(dict(os.environ)))


def app_row(settings: Settings) -> dict:
    missing = [name for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY") if not settings.text(name)
               and not (name == "GITHUB_PRIVATE_KEY" and settings.text("GITHUB_PRIVATE_KEY_PATH"))]
    if missing:
        return {"check": "App id and private key", "ok": False, "unset": len(missing) == 2,
                "detail": f"{' and '.join(missing)} not set (the App's settings page on GitHub has both)"}
    found = asyncio.run(app_check.verify_app(settings))
    return {"check": "App id and private key", "ok": found.ok, "unset": False, "detail": found.message}


def _set_row(settings: Settings, check: str, names: tuple[str, ...]) -> dict:
    missing = [name for name in names if not settings.text(name)]
    detail = "set" if not missing else f"{' and '.join(missing)} not set"
    return {"check": check, "ok": not missing, "unset": len(missing) == len(names), "detail": detail}


# Sections beyond the agents, the sandbox floor and the model channel (a new area adds its own),
# each with what the progress line says while it runs.
SECTIONS: list[tuple[str, Callable[[Settings], dict]]] = [("the GitHub App", github_section),
                                                  ("the database", database_section),
                                                  ("the wire APIs", wire_api_section)]


def verdict(agents: list[dict], floor: list[dict], sections: Sequence[dict]) -> tuple[bool, str]:
    """The overall `ok` and the one line that ends the report."""
    broken = [row["agent"] for row in agents if row["refuse"]]
    broken += [row["check"] for row in floor if not row["ok"]]
    broken += [s["section"] for s in sections if s.get("ok") is False]
    usable = [row["agent"] for row in agents if row["logged_in"] and not row["refuse"]]
    runs = f"agents ready: {', '.join(usable)}" if usable else "but no agent can run yet: give one a key (above)"
    unset = [s["section"] for s in sections if s.get("configured") is False]
    tail = f"; not set up: {', '.join(unset)}" if unset else ""
    if broken:
        return False, f"NOT OK: fix {', '.join(broken)} ({runs}{tail})"
    return True, f"OK{': ' if usable else ', '}{runs}{tail}"


STATE_WIDTH = len("warning") + 1


def state(row: dict, unset: bool = False) -> str:
    """A row's status word: its own (ok, warning, missing, failed), else from its `ok`; a
    section not set up at all is missing, not failed."""
    return row.get("state") or ("ok" if row["ok"] else "missing" if unset else "failed")


class Progress:
    """What the doctor is checking, on stderr while it probes: one line each through a pipe, one
    line redrawn in place on a terminal (cleared before the report)."""

    def __init__(self, err: TextIO | None = None):
        self.err = err or sys.stderr
        self.live = self.err.isatty()

    def __call__(self, what: str) -> None:
        line = f"bot doctor: checking {what}…"
        self.err.write(f"\r\x1b[2K{line}" if self.live else line + "\n")
        self.err.flush()

    def done(self) -> None:
        if self.live:
            self.err.write("\r\x1b[2K")
            self.err.flush()


def _channel_line(row: dict) -> str:
    line = (f"{row['agent']:<9} relay: {', '.join(row['relay']) or 'none'}; "
            f"key in the sandbox: {', '.join(row['direct']) or 'none'}")
    refused = row.get("refused")
    return line + (f"; refused (no relay channel declared): {', '.join(refused)}" if refused else "")


def render(agents: list[dict], floor: list[dict], channel: Sequence[dict] = (),
           sections: Sequence[dict] = (), verdict_line: str = "") -> str:
    lines = [f"{'agent':<9} {'version':<10} {'status':<13} detail"]
    for row in agents:
        status = "REFUSED" if row["refuse"] else ("ready" if row["logged_in"] else "needs a key")
        lines.append(f"{row['agent']:<9} {row['version'] or '-':<10} {status:<13} {row['reason']}")
    width = max([len(row["check"]) for row in floor] + [len(row["check"]) for section in sections
                                                          for row in section["rows"]] + [len("sandbox check")])
    if floor:
        lines += ["", f"{'sandbox check':<{width}} {'status':<{STATE_WIDTH}} detail"]
        lines += [f"{row['check']:<{width}} {state(row):<{STATE_WIDTH}} {row['detail']}" for row in floor]
    if channel:
        lines += ["", "model channel (per credential kind)"]
        lines += [_channel_line(row) for row in channel]
    for section in sections:
        off = section.get("configured") is False  # not set up at all: a finding, not a failure
        lines += ["", f"{section['section']:<{width}} {'status':<{STATE_WIDTH}} detail"]
        lines += [f"{row['check']:<{width}} {state(row, off):<{STATE_WIDTH}} {row['detail']}"
                  for row in section["rows"]]
    if verdict_line:
        lines += ["", verdict_line]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output (with an overall `ok`)")
    args = parser.parse_args(argv)
    settings = _as_serve_reads_them()
    progress = Progress()
    agents = agent_rows(settings, progress)
    progress("the sandbox")
    floor, channel = sandbox_rows(settings), channel_rows(settings)
    sections = []
    for what, section in SECTIONS:
        progress(what)
        sections.append(section(settings))
    progress.done()
    ok, line = verdict(agents, floor, sections)
    if args.json:
        print(json.dumps({"ok": ok, "verdict": line, "agents": agents, "sandbox": floor, "model_channel": channel,
                          "sections": sections}, indent=2))
    else:
        print(render(agents, floor, channel, sections, line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
