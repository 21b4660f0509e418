"""`bot sandbox`: run one command under the floor an episode gets, or check the host.

  bot sandbox exec [--tier 1] [--workdir PATH] [--writable] [--allow HOST[:PORT]]...
                   [--gateway HOST:PORT]... [--bridge HOST:PORT] [--memory BYTES] [--pids N]
                   [--timeout SECONDS] [--worktree-growth BYTES] [--home-size BYTES]
                   [--tmp-size BYTES] [--egress-log PATH] -- COMMAND...
  bot sandbox check

`exec` streams the command's output, then prints each egress decision and the
outcome as JSON lines on stderr, and exits with the command's exit code (128+signal
when killed, 70 when the floor refused and nothing ran).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import sys
from pathlib import Path
from typing import BinaryIO

from bot.config import Settings
from sandbox import doctor_checks, select_spawner
from sandbox.base import REFUSED_EXIT_CODE, Limits, Refused, SandboxConfig
from sandbox.disk import human

CAP_FLAGS = {"worktree": "--worktree-growth", "home": "--home-size"}  # the flag that sets each folder's cap


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bot sandbox", description="Run one command under the sandbox floor "
                                     "an episode gets, or check the host.")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("check", help="show each floor check and its verdict")
    run = sub.add_parser("exec", help="run one command in the sandbox")
    run.add_argument("--tier", type=int, choices=(0, 1), default=None,
                     help="sandbox tier: 1 bubblewrap, 0 process jail (default: BOT_SANDBOX_TIER)")
    run.add_argument("--workdir", type=Path, default=Path.cwd(),
                     help="folder mounted as the working directory (default: .)")
    run.add_argument("--writable", action="store_true", help="mount the workdir read-write")
    run.add_argument("--allow", action="append", default=[], metavar="HOST[:PORT]",
                     help="allow egress to a public host name, '.suffix' or IP literal")
    run.add_argument("--gateway", action="append", default=[], metavar="HOST:PORT",
                     help="operator gateway: exact host:port, allowed even when private")
    run.add_argument("--bridge", default=None, metavar="HOST:PORT",
                     help="host address reachable inside at 127.0.0.1:8765")
    run.add_argument("--memory", type=int, default=Limits.memory_bytes, metavar="BYTES", help="memory limit")
    run.add_argument("--pids", type=int, default=Limits.pids, help="process limit")
    run.add_argument("--timeout", type=float, default=Limits.timeout_s, metavar="SECONDS", help="wall-clock limit")
    run.add_argument("--worktree-growth", type=int, default=Limits.worktree_growth_bytes, metavar="BYTES",
                     help="how much a --writable workdir may grow (a write past it fails: no space)")
    run.add_argument("--home-size", type=int, default=Limits.home_bytes, metavar="BYTES",
                     help="how much the CLI home may hold")
    run.add_argument("--tmp-size", type=int, default=Limits.tmpfs_bytes, metavar="BYTES",
                     help="size of /tmp and /dev/shm")
    run.add_argument("--home", type=Path, default=None, help="CLI home (default: a fresh one)")
    run.add_argument("--ro-bind", action="append", type=Path, default=[], dest="ro_binds",
                     help="also mount this path read-only (repeatable)")
    run.add_argument("--egress-log", type=Path, default=None, help="write each egress decision here (JSON lines)")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    settings = Settings.load(os.environ)
    if args.action == "check":
        return _check(settings)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("bot sandbox exec: no command given (put it after --)", file=sys.stderr)
        return 2
    return asyncio.run(_exec(args, command, settings))


def _check(settings: Settings) -> int:
    results = doctor_checks(settings.sandbox_host)
    for name, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    return 0 if all(ok for _, ok, _ in results) else REFUSED_EXIT_CODE


def _config(args: argparse.Namespace, run_dir: Path) -> SandboxConfig:
    bridge = None
    if args.bridge:
        host, _, port = args.bridge.rpartition(":")
        bridge = (host, int(port))
    return SandboxConfig(
        workdir=args.workdir.resolve(), home=(args.home or run_dir / "home").resolve(),
        writable=args.writable, allowed_hosts=tuple(args.allow), gateways=tuple(args.gateway),
        limits=Limits(memory_bytes=args.memory, pids=args.pids, timeout_s=args.timeout,
                      worktree_growth_bytes=args.worktree_growth, home_bytes=args.home_size,
                      tmpfs_bytes=args.tmp_size),
        min_tier=1 if args.tier in (None, 1) else 0, ro_binds=tuple(p.resolve() for p in args.ro_binds),
        bridge_upstream=bridge, tmpdir=run_dir / "tmp", run_id=run_dir.name,
        egress_log=args.egress_log or run_dir / "egress.jsonl")


async def _exec(args: argparse.Namespace, command: list[str], settings: Settings) -> int:

    run_dir = settings.data_dir / "runs" / f"sandbox-{secrets.token_hex(6)}"
    run_dir.mkdir(parents=True)
    cfg = _config(args, run_dir)
    try:
        proc = await select_spawner(settings.sandbox_tier if args.tier is None else args.tier,
                                    settings.sandbox_host).start(cfg, command, {})
    except Refused as exc:
        print(f"bot sandbox: refused: {exc.reason}", file=sys.stderr)
        if exc.fix:
            print(f"bot sandbox: fix: {exc.fix}", file=sys.stderr)
        return REFUSED_EXIT_CODE
    try:
        await asyncio.gather(_copy(proc.stdout, sys.stdout.buffer), _copy(proc.stderr, sys.stderr.buffer))
        rc = await proc.wait()
    finally:
        if args.home is None:
            shutil.rmtree(run_dir / "home", ignore_errors=True)
    for decision in proc.egress:
        print("egress: " + json.dumps(decision.as_dict(), sort_keys=True), file=sys.stderr)
    outcome = proc.outcome()
    print("sandbox: " + json.dumps(outcome, sort_keys=True), file=sys.stderr)
    for full in outcome.get("disk_full", []):
        print(f"bot sandbox: the {full['layer']} reached its {human(full['bytes'])} cap "
              f"({CAP_FLAGS.get(full['layer'], '?')})", file=sys.stderr)
    return rc if rc >= 0 else 128 - rc


async def _copy(reader: asyncio.StreamReader, out: BinaryIO) -> None:
    while chunk := await reader.read(1 << 16):
        out.write(chunk)
        out.flush()
