"""`bot` command line. Each subcommand lives in its own module as `main(argv) -> int`,
imported only when used so that `bot --help` stays instant."""
from __future__ import annotations

import importlib
import sys
from importlib import metadata

COMMANDS = {
    "serve": ("bot.cli.serve", "run the GitHub App service (webhooks on /webhook)"),
    "run": ("bot.cli.run", "run one request against a local repository and print the answer"),
    "worker": ("bot.cli.worker", "run workers only (many machines on one PostgreSQL; see docs/deploy.md)"),
    "migrate": ("bot.cli.migrate", "apply the database's schema migrations (they also run at start)"),
    "db": ("bot.cli.db", "copy every table from one database to another (SQLite to PostgreSQL)"),
    "action": ("bot.cli.action", "run as a GitHub Action step ($GITHUB_EVENT_PATH)"),
    "doctor": ("bot.cli.doctor", "show the readiness of every agent CLI and of the sandbox floor"),
    "sandbox": ("bot.cli.sandbox", "run one command under the sandbox floor an episode gets"),
    "runs": ("bot.cli.runs", "show the recorded runs and their events"),
    "gc": ("bot.cli.gc", "remove what is past the retention windows and the disk budget (--dry-run)"),
    "keys": ("bot.cli.keys", "rotate the key that encrypts stored secrets (re-encrypts every one)"),
    "backup": ("bot.cli.backup", "copy the database and the key to one archive (while running)"),
    "restore": ("bot.cli.restore", "put a `bot backup` archive back in the data dir"),
    "automations": ("bot.cli.automations", "evaluate the declared schedules once (tick [--at TIME])"),
    "replay": ("bot.cli.replay", "post a delivery saved from the App's Recent deliveries page, signed"),
}

USAGE = "usage: bot <command> [options]   (bot <command> --help for its options; bot --version)\n\ncommands:\n" \
    + "\n".join(f"  {name:<9} {summary}" for name, (_, summary) in COMMANDS.items())


def version() -> str:
    """The installed distribution's version (pyproject.toml), without importing anything heavy."""
    try:
        return metadata.version("github-agent-bot")
    except metadata.PackageNotFoundError:
        return "unknown (not installed: run `make install`)"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] in ("-V", "--version"):
        print(f"bot {version()}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"bot: unknown command {name!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    from bot.cli import settings_check  # noqa: PLC0415 - `bot --help` stays instant
    if settings_check.refused(name):  # every variable checked first, before the command's imports
        return settings_check.EXIT_BAD_SETTING
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
