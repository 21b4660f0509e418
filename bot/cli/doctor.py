"""`bot doctor [--json]`: the readiness of every agent CLI and of the sandbox floor.

Each adapter's detect() runs the CLI's own version and auth probes (never an episode) in a
throwaway HOME with a scrubbed environment that keeps only the credential variables the CLI
reads. Exit status 1 when an agent must be refused (missing, too old) or a floor check fails;
a logged-out agent is an actionable line, not a failure.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from adapters import base as adapters
from adapters.base import Readiness
from bot import config
from bot.job.model_channel import credential_modes
from sandbox import doctor_checks
from sandbox.base import base_env

PROBE_TIMEOUT_S = 30


def probe_for(adapter, home: Path):
    """A ProbeFn running argv with its own HOME and only the adapter's credential variables."""

    env = base_env(home, home / "tmp") | {name: value for name in adapter.credential_env
                                          if (value := config.provider_credential(name))}
    env["CODEX_HOME"] = str(home / ".codex")

    def probe(argv: Sequence[str]) -> tuple[int, str]:
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        (home / ".codex").mkdir(exist_ok=True)
        try:
            done = subprocess.run(list(argv), env=env, cwd=home, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=PROBE_TIMEOUT_S)
        except FileNotFoundError as exc:
            return 127, str(exc)
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {PROBE_TIMEOUT_S} s"
        return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")

    return probe


def agent_rows() -> list[dict]:
    rows = []
    for name in adapters.names():
        adapter = adapters.get(name, config.operator_for(name))
        with tempfile.TemporaryDirectory(prefix=f"bot-doctor-{name}-") as scratch:
            ready: Readiness = adapter.detect(probe_for(adapter, Path(scratch)))
        rows.append({"agent": name, "binary": adapter.binary, "available": ready.available,
                     "logged_in": ready.logged_in, "version": ready.version, "refuse": ready.refuse,
                     "reason": ready.reason, "min_version": adapter.min_version})
    return rows


def sandbox_rows() -> list[dict]:
    try:
        checks = doctor_checks(config.sandbox_host())
    except (OSError, RuntimeError) as exc:  # a probe the host cannot run is itself a finding
        return [{"check": "sandbox checks", "ok": False, "detail": repr(exc)}]
    return [{"check": name, "ok": ok, "detail": detail} for name, ok, detail in checks]


def channel_rows() -> list[dict]:
    """Per agent, the credential kinds whose model calls go through the relay and those that run
    in direct mode, the key in the sandbox (bot/job/model_channel.py decides)."""
    return [{"agent": name, **credential_modes(name)} for name in config.AGENTS]


def render(agents: list[dict], floor: list[dict], channel: Sequence[dict] = ()) -> str:
    lines = [f"{'agent':<9} {'version':<10} {'status':<13} detail"]
    for row in agents:
        status = "REFUSED" if row["refuse"] else ("ready" if row["logged_in"] else "needs login")
        lines.append(f"{row['agent']:<9} {row['version'] or '-':<10} {status:<13} {row['reason']}")
    if floor:
        lines += ["", f"{'sandbox check':<32} ok   detail"]
        lines += [f"{row['check']:<32} {'yes' if row['ok'] else 'NO':<4} {row['detail']}" for row in floor]
    if channel:
        lines += ["", "model channel (per credential kind)"]
        lines += [f"{row['agent']:<9} relay: {', '.join(row['relay']) or 'none'}; "
                  f"key in the sandbox: {', '.join(row['direct']) or 'none'}" for row in channel]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    agents, floor, channel = agent_rows(), sandbox_rows(), channel_rows()
    if args.json:
        print(json.dumps({"agents": agents, "sandbox": floor, "model_channel": channel}, indent=2))
    else:
        print(render(agents, floor, channel))
    failed = any(row["refuse"] for row in agents) or any(not row["ok"] for row in floor)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
