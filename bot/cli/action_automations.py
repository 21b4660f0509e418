"""The automations' part of `bot action workflow`: the `on:` entries for the automations a
repository's `.github/bot.yml` declares (docs/automations.md), read from the local checkout.

    declared = from_config(".github/bot.yml")   # Declared(crons, scheduled, others)
    events = on_lines(declared)                   # `  schedule:` and its `- cron:` lines, or ""
    condition = let_in(condition, declared)       # the job's `if:`, also true for a scheduled run

A scheduled automation's cron lines become the workflow's `schedule:` (GitHub runs it in UTC, as the
bot's grammar means them; each line once, however many automations share it), and the job's `if:`
lets `schedule` runs through. The workflow's run carries its cron line (`github.event.schedule`),
which is how a scheduled run is matched to its automations. The other automations (run on a
repository event, an alert or `fire`) are listed in a comment: the Action does not run them; the
installed App does. Only what the grammar validated reaches the file: the cron lines (digits and
`*,-/` only, bot/cron.py) and the automations' names (slugs), never a prompt.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.workspace.repo_config import CONFIG_PATH, RepoConfig

SCHEDULE_IF = "github.event_name == 'schedule'"


@dataclass(frozen=True)
class Declared:
    crons: tuple[str, ...] = ()  # every scheduled automation's cron lines, each once, in file order
    scheduled: tuple[str, ...] = ()  # the scheduled automations' names
    others: tuple[tuple[str, str], ...] = ()  # (name, event) of the automations the Action does not run


NONE = Declared()


def default_config(cwd: Path | None = None) -> str | None:
    """The working directory's `.github/bot.yml`, when it has one."""
    path = (cwd or Path.cwd()) / CONFIG_PATH
    return str(path) if path.is_file() else None


def declared(config: RepoConfig) -> Declared:
    crons: dict[str, None] = {}
    scheduled, others = [], []
    for automation in config.automations:
        if automation.on.schedule:
            scheduled.append(automation.name)
            crons.update(dict.fromkeys(" ".join(line.split()) for line in automation.on.schedule))
        else:
            others.append((automation.name, automation.on.event))
    return Declared(tuple(crons), tuple(scheduled), tuple(others))


def on_lines(found: Declared) -> str:
    """The `on:` entries the automations add (indented under `on:`), with a comment on each kind."""
    lines = []
    if found.crons:
        lines.append(f"  # the scheduled automations of {CONFIG_PATH} (UTC): {', '.join(found.scheduled)}")
        lines.append("  schedule:")
        lines += [f'    - cron: "{cron}"' for cron in found.crons]
    if found.others:
        names = ", ".join(f"{name} ({event})" for name, event in found.others)
        lines.append(f"  # run by the installed App, not by this workflow: {names}")
    return "\n".join(lines)


def let_in(condition: str, found: Declared) -> str:
    """The job's `if:` block, true also for a scheduled run (which no person and no bot sent)."""
    if not found.crons:
        return condition
    head, marker, tail = condition.partition("    if: >-\n")
    return (f"{head}    # or for a scheduled automation's run (github.event.schedule is its cron line)\n"
            f"{marker}      {SCHEDULE_IF} || (\n{tail})")
