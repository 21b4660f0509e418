"""`bot action`: the pipeline as one GitHub Actions step (the event comes from the workflow run).

Reads the event from $GITHUB_EVENT_PATH / $GITHUB_EVENT_NAME, parses it with the same intake and
grammar as the service, talks to GitHub with the workflow's GITHUB_TOKEN, runs the same pipeline
and posts the answer in the thread. Writes `status`, `answer` and `comment-id` to $GITHUB_OUTPUT
and a short step summary. The comment text is never echoed to the log: it is attacker-controlled.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
from gidgethub import HTTPException
from gidgethub import actions as workflow

from adapters import base
from bot.automations import request
from bot.automations.mode import run_as
from bot.cli import (
    action_automations,
    action_reply_cap,
    action_schedule,
    action_session,
    action_spend_floor,
    action_workflow,
    preflight,
)
from bot.cli.action_thread import ListedOnce
from bot.config import MissingConfig, Settings
from bot.db import Database
from bot.episode.resume_state import scrub_homes
from bot.errors import BotError
from bot.github.client import RetryingAPI, Thread, bot_logins
from bot.intake import grammar
from bot.intake.decide import NOT_ALLOWED, Decision, Episode, Event, Ignore, Reply, decide
from bot.intake.payload import Malformed
from bot.intake.spec import JobSpec
from bot.job import gate, pipeline
from bot.job.conversations import thread_key
from bot.job.start import context_for
from bot.job.tracking import GitHubSurface
from bot.permissions import association_may_trigger
from bot.record.redact import install_log_redaction, redact
from bot.service import store
from bot.service.reply_texts import reply_text
from bot.workspace.repo_config import ConfigError
from bot.workspace.repo_config_model import Automation
from sandbox.limits import raise_open_files_limit

MAX_SUMMARY_BYTES = 900_000  # GitHub refuses step summaries over 1 MiB
EXIT_OK, EXIT_FAILED, EXIT_MISCONFIGURED = 0, 1, 2


class Misconfigured(BotError, RuntimeError):
    """The step cannot run; the message says what to set."""


@dataclass
class StepOutcome:
    status: str  # ignored | replied | not_allowed | done | failed | cancelled
    answer: str = ""
    comment_id: int | None = None
    reason: str = ""


class RecordingSurface:
    """A GitHubSurface that remembers the last text it posted, for the step's outputs."""

    def __init__(self, inner: GitHubSurface) -> None:
        self.inner, self.last_body = inner, ""
        self.handle: int | None = None

    async def post(self, body: str) -> int | None:
        self.handle, self.last_body = await self.inner.post(body), body
        return self.handle

    async def edit(self, handle: int | None, body: str) -> None:
        await self.inner.edit(handle, body)
        self.handle, self.last_body = handle, body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bot action", description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", default="run", choices=("run", "plan", "workflow"),
                        help="run: answer the event (default); plan: only say what it needs (kind, agent); "
                             "workflow: print the workflow file a repository adds to use this Action")
    parser.add_argument("--uses", help="workflow: where the Action lives, OWNER/REPO@REF (default: this checkout)")
    parser.add_argument("--handle", default="bot", help="workflow: the mention, without @")
    parser.add_argument("--agent", default="claude", help="workflow: the default agent")
    parser.add_argument("--triggers", help="workflow: also the automatic triggers, NAME,… or all "
                                           f"({', '.join(action_workflow.TRIGGERS)})")
    parser.add_argument("--config", help="workflow: the triggers this .github/bot.yml turns on and the schedules "
                                         "its automations declare (default: the working directory's)")
    parser.add_argument("--claude-subscription", action="store_true",
                        help="workflow: pass CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`), not an API key")
    parser.add_argument("--sandbox-tier", type=int, choices=(0, 1),
                        help="workflow: the action's sandbox-tier (0 on a runner without passwordless sudo)")
    args = parser.parse_args(argv or [])
    if args.step != "workflow" and settings_refused():
        return EXIT_MISCONFIGURED
    if args.step == "plan":
        return plan_step()
    if args.step == "workflow":
        return workflow_step(args.uses, args.handle, args.agent, args.triggers, args.config,
                             args.claude_subscription, args.sandbox_tier)
    raise_open_files_limit()
    settings = _settings_after_runner_defaults()
    logging.basicConfig(level=settings.text("BOT_LOG_LEVEL"))
    install_log_redaction()  # the workflow log of a public repository is public
    try:
        name, payload, token = read_event(settings), load_payload(settings), github_token(settings)
    except Misconfigured as exc:
        workflow.command("error", str(exc))
        return EXIT_MISCONFIGURED
    try:
        outcome = asyncio.run(handle(name, payload, token, settings))
    except HTTPException as exc:  # GitHub refused our own comment: nothing could be posted
        workflow.command("error", could_not_answer(exc, token))
        outcome = StepOutcome("failed", reason=type(exc).__name__)
    except httpx.TransportError as exc:
        workflow.command("error", f"bot could not reach GitHub: {type(exc).__name__}: {redact(str(exc), [token])}")
        outcome = StepOutcome("failed", reason=type(exc).__name__)
    finally:
        scrub_credential_files(settings.data_dir)
    report(outcome, settings)
    return EXIT_FAILED if outcome.status == "failed" else EXIT_OK


def settings_refused() -> bool:
    """BOT_DEFAULT_AGENT (the action's `agent` input) and BOT_SANDBOX_TIER (`sandbox-tier`) are
    refused in one error line before the event is read or anything installed, as `bot serve` and
    `bot run` refuse them: an unknown agent would otherwise be planned, then answered in the thread."""
    try:
        preflight.check_settings(Settings(dict(os.environ)))  # no App here: the workflow's token
    except MissingConfig as exc:
        workflow.command("error", f"{exc} (in the workflow: the action's `agent` or `sandbox-tier` input)")
        return True
    return False


def workflow_step(uses: str | None, handle: str, agent: str, triggers: str | None = None,
                  config_path: str | None = None, subscription: bool = False,
                  sandbox_tier: int | None = None) -> int:
    config_path = config_path or action_automations.default_config()
    try:
        chosen = action_workflow.triggers_from(triggers, config_path)
        print(action_workflow.render(uses or action_workflow.this_checkout(), handle, agent, chosen, subscription,
                                     sandbox_tier, action_workflow.automations_from(config_path)), end="")
    except action_workflow.WorkflowError as exc:
        print(f"bot action workflow: {exc}", file=sys.stderr)
        return EXIT_MISCONFIGURED
    return EXIT_OK


def plan_step() -> int:
    """Before anything is installed: whether this event is for the bot and which agents' CLIs the
    run needs (action.yml installs only those). Written to $GITHUB_OUTPUT as `kind` and `agents`
    (space-separated)."""
    settings = _settings_after_runner_defaults()
    try:
        name, payload = read_event(settings), load_payload(settings)
        kind, agents, reason = asyncio.run(plan_scheduled(payload, github_token(settings), settings)) \
            if name == "schedule" else plan(name, payload, settings)
    except Misconfigured as exc:
        workflow.command("error", str(exc))
        return EXIT_MISCONFIGURED
    set_output(settings, "kind", kind)
    set_output(settings, "agents", " ".join(agents))
    print(f"bot: {kind}" + (f" with {', '.join(agents)}" if agents else "") + (f": {reason}" if reason else ""))
    return EXIT_OK


def plan(event_name: str, payload: dict, settings: Settings) -> tuple[str, tuple[str, ...], str]:
    """("ignored" | "reply" | "run", the agents a run needs, why it is ignored) by the one intake
    decision `handle` answers (bot/intake/decide.py): a comment's command (a review may name several
    agents), or an automatic trigger, which runs only when .github/bot.yml turns it on."""
    decision = _decision(event_name, payload, settings.handle)
    if isinstance(decision, Ignore):
        return "ignored", (), decision.why
    if isinstance(decision, Reply) or decision.kind != "episode":
        return "reply", (), ""
    return "run", _agents(decision.spec.command, settings.default_agent), ""


def _decision(event_name: str, payload: dict, handle: str) -> Decision:
    try:
        return decide(Event(event_name, payload, via_app=False), handle)
    except Malformed as exc:
        return Ignore(f"malformed payload: {exc}")


def _agents(command: grammar.Command, default_agent: str) -> tuple[str, ...]:
    named = tuple(command.agents) or ((command.agent,) if command.agent else ())
    return tuple(agent for agent in named if agent in base.names()) or (default_agent,)


def could_not_answer(exc: HTTPException, token: str) -> str:
    """GitHub's refusal, and the permission to check only when it is a permission refusal."""
    status = int(exc.status_code)
    text = f"bot could not answer in the thread: {type(exc).__name__} {status}: {redact(str(exc), [token])}."
    if status in (401, 403, 404):
        text += " Does the job grant `issues: write` and `pull-requests: write`?"
    return text


def _settings_after_runner_defaults() -> Settings:
    """The step's settings, once the runner's defaults are in the environment (the CLIs and git,
    started later, read them there too)."""
    _defaults_from_runner(Settings(dict(os.environ)))
    return Settings(dict(os.environ))


def _defaults_from_runner(runner: Settings) -> None:
    """Where the runner tells us more than the service defaults: git host and a data dir."""
    if runner.is_set("GITHUB_SERVER_URL") and (server := runner.text("GITHUB_SERVER_URL")):
        os.environ.setdefault("BOT_GIT_BASE_URL", server)
    temp = runner.text("RUNNER_TEMP")
    if temp and not runner.is_set("BOT_DATA_DIR"):
        os.environ["BOT_DATA_DIR"] = str(Path(temp) / "bot-data")


def read_event(settings: Settings) -> str:
    name = settings.text("GITHUB_EVENT_NAME")
    if not name:
        raise Misconfigured("GITHUB_EVENT_NAME is not set: `bot action` runs as a step of a GitHub workflow.")
    return name


def load_payload(settings: Settings) -> dict:
    path = settings.text("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        raise Misconfigured("GITHUB_EVENT_PATH does not name the event file: `bot action` runs as a "
                            "step of a GitHub workflow.")
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise Misconfigured(f"{path} does not hold a webhook payload object.")
    return data


def github_token(settings: Settings) -> str:
    token = settings.text("BOT_GITHUB_TOKEN") or settings.text("GITHUB_TOKEN")
    if not token:
        raise Misconfigured("No GitHub token: pass `github-token` (default `${{ github.token }}`) to the "
                            "action, and grant the job `issues: write`, `pull-requests: write` and "
                            "`contents: write` permissions.")
    return token


async def handle(event_name: str, payload: dict, token: str, settings: Settings) -> StepOutcome:
    """Decide as the webhook intake does, then answer in the thread; a scheduled run runs the
    automations on its cron line (bot/cli/action_schedule.py)."""
    if event_name == "schedule":
        return await _scheduled(payload, token, settings)
    decision = _decision(event_name, payload, settings.handle)
    if isinstance(decision, Ignore):
        return StepOutcome("ignored", reason=decision.why)
    async with httpx.AsyncClient(timeout=30) as client:
        return await _answer(client, decision, token, settings)


async def _answer(client: httpx.AsyncClient, decision: Reply | Episode, token: str,
                  settings: Settings) -> StepOutcome:
    spec = decision.spec
    thread = ListedOnce(RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url), spec.repo,
                        spec.number, own_logins=bot_logins(settings))
    surface = RecordingSurface(GitHubSurface(thread, spec.review_thread))
    if spec.automatic:  # runs only when bot.yml turns this trigger on and its author may trigger; else silence
        if why := await gate.refused(thread, spec.automatic, spec.author):
            return StepOutcome("ignored", reason=why)
        return await _run(spec, thread, surface, settings, session_folder(settings))
    if not association_may_trigger(spec.association):  # answered at most once per window
        window = settings.number("BOT_OUTSIDER_REPLY_WINDOW")
        if await action_reply_cap.answered_recently(thread, spec.review_thread, window):
            return StepOutcome("ignored", reason="someone without permission was answered here recently")
        status = "not_allowed" if spec.reply == NOT_ALLOWED else "replied"
        text = _reply_text(spec, spec.reply or "help", settings)
        return await _reply(surface, action_reply_cap.marked(text), status)
    if isinstance(decision, Episode) and decision.kind == "episode":
        return await _run(spec, thread, surface, settings, session_folder(settings))
    kind = spec.reply or decision.kind
    floor = await spend_floor(thread, thread_key(spec.repo, spec.number)) if kind == "status" else None
    return await _reply(surface, _reply_text(spec, kind, settings, floor), "replied")


async def _reply(surface: RecordingSurface, text: str, status: str) -> StepOutcome:
    comment_id = await surface.post(text)
    return StepOutcome(status, answer=text, comment_id=comment_id)


def _reply_text(spec: JobSpec, kind: str, settings: Settings,
                floor: action_spend_floor.Floor | None = None) -> str:
    """The service's words (bot/service/reply_texts.py); a status first restores the thread's
    sessions and spend so far from the session cache, and its spend floor from the thread."""
    key, db = thread_key(spec.repo, spec.number), None
    if kind == "status":
        db = store.connect(settings=settings)
        if (folder := session_folder(settings)) is not None and \
                restore_session(db, key, folder, settings, _requester(spec.author_id)).discarded:
            save_session(db, key, folder, settings)  # so the discarded entry is not restored again
        keep_floor(db, key, floor or action_spend_floor.Floor())
    return reply_text(db, spec, kind, key, settings, in_actions=True)


async def _scheduled(payload: dict, token: str, settings: Settings) -> StepOutcome:
    """Each automation whose cron line this run carries, in its own issue, with its declared prompt,
    resuming its own session from the line's session cache entry (a part per issue); the step
    fails when one of them did."""
    async with httpx.AsyncClient(timeout=30) as client:
        found = await _due(client, payload, token, settings)
        if isinstance(found, str):
            return StepOutcome("ignored", reason=found)
        repo_thread, automations = found
        entry = session_folder(settings)
        if entry is not None and action_session.threads_folder(entry):
            workflow.command("warning", "bot: the scheduled runs' session cache was not a folder and was removed; "
                                        "each automation starts a fresh session")
        outcome, numbers, finished = StepOutcome("ignored"), set(), False
        try:
            for automation in automations:
                number = await action_schedule.issue_of(repo_thread, automation.name)
                numbers.add(number)
                ran = await _run_automation(repo_thread, automation, number, settings,
                                            None if entry is None else action_session.thread_part(entry, number))
                outcome = ran if outcome.status != "failed" else dataclasses.replace(ran, status="failed")
            finished = True
        finally:
            if entry is not None:  # nothing else the entry holds is saved again (cut short: other parts stay)
                action_session.keep_only(entry, numbers, any_part=not finished)
    return outcome


async def _run_automation(repo_thread: Thread, automation: Automation, number: int, settings: Settings,
                          folder: Path | None) -> StepOutcome:
    thread = ListedOnce(repo_thread.api, repo_thread.repo, number, own_logins=repo_thread.own_logins)
    asked = request.for_slot(automation, action_schedule.slot_now())
    spec = JobSpec(repo=thread.repo, number=number, author=min(thread.own_logins),
                   title=f"Automation: {automation.name}",
                   command=grammar.Command(kind="run", agent=automation.agent, request=asked))
    return await _run(spec, thread, RecordingSurface(GitHubSurface(thread, None)), settings, folder, automation)


async def _due(client: httpx.AsyncClient, payload: dict, token: str,
               settings: Settings) -> tuple[Thread, list[Automation]] | str:
    """The repository's thread and the automations on the run's cron line, or why none runs."""
    line, repo = action_schedule.cron_line(payload), action_schedule.repository(payload)
    if line is None or repo is None:
        return "a scheduled run without a cron line or repository the bot reads"
    thread = Thread(RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url), repo, 0,
                    own_logins=bot_logins(settings))
    try:
        found = await action_schedule.due_automations(thread, line)
    except ConfigError as exc:
        return f"no automation runs: {redact(str(exc), [token])[:300]}"
    return (thread, found) if found else f"no automation of .github/bot.yml runs on {line!r}"


async def plan_scheduled(payload: dict, token: str, settings: Settings) -> tuple[str, tuple[str, ...], str]:
    """`plan` for a scheduled run: the agents of the automations on its cron line, and the step
    output `session-key` naming the line's session cache entry (action.yml restores and saves it)."""
    async with httpx.AsyncClient(timeout=30) as client:
        found = await _due(client, payload, token, settings)
    if isinstance(found, str):
        return "ignored", (), found
    line = action_schedule.cron_line(payload)
    set_output(settings, "session-key", action_schedule.session_key(line or ""))
    return "run", tuple(dict.fromkeys(automation.agent for automation in found[1])), ""


async def _run(spec: JobSpec, thread: Thread, surface: RecordingSurface, settings: Settings,
               folder: Path | None, automation: Automation | None = None) -> StepOutcome:
    """`folder`: where the thread's session cache entry is restored from and exported to (None: the
    step has no session cache)."""
    acting = dataclasses.replace(spec, installation_id=None)  # the workflow's token acts, never an App's
    ctx = context_for(acting, thread, surface, settings=settings)
    ctx = run_as(ctx, automation) if automation is not None else ctx  # its may:, its labels, its money cap
    db = store.connect(settings=settings)
    floor = await spend_floor(thread, ctx.conversation)
    if folder is not None:
        restore_session(db, ctx.conversation, folder, settings, _requester(ctx.requester_id))
    keep_floor(db, ctx.conversation, floor)  # after the cache's rows: the floor tops up, never adds twice
    try:
        status = await pipeline.run(db, ctx, asyncio.Event())
    finally:
        if folder is not None:
            save_session(db, ctx.conversation, folder, settings)
    return StepOutcome(status, answer=surface.last_body, comment_id=surface.handle)


def restore_session(db: Database, key: str, folder: Path, settings: Settings,
                    requester: str | None) -> action_session.Restored:
    """The thread's cached sessions and spend; what was dropped or discarded is a warning on the
    workflow run (never the entry's text), and the command goes on to its answer."""
    restored = action_session.restore(db, key, folder, settings.data_dir, requester=requester)
    if restored.discarded:
        workflow.command("warning", f"bot: the thread's session cache was discarded ({restored.discarded}); "
                                    "this turn starts a fresh session")
    elif restored.dropped_count:
        workflow.command("warning", f"bot: {restored.dropped_count} values of the thread's session cache were "
                                    "outside their type or range and were dropped")
    return restored


async def spend_floor(thread: Thread, key: str) -> action_spend_floor.Floor:
    """The spend floor the bot's own markers in the thread set (bot/cli/action_spend_floor.py), from
    the one listing of the thread's comments the pipeline then reuses for the agent's context."""
    comments = await (thread.comments_to_share() if isinstance(thread, ListedOnce) else thread.comments())
    return action_spend_floor.read(comments, key, thread.own_logins)


def keep_floor(db: Database, key: str, floor: action_spend_floor.Floor) -> None:
    """The ledger's thread figure is at least the floor; markers passed over are a warning."""
    action_spend_floor.raise_to(db, key, floor)
    if floor.ignored or floor.not_ours:
        workflow.command("warning", f"bot: {floor.ignored} of the bot's spend markers in the thread were outside "
                                    f"their grammar and {floor.not_ours} comments not written by the bot carried "
                                    "one; they were ignored")


def save_session(db: Database, key: str, folder: Path, settings: Settings) -> None:
    """Write the thread's entry; action.yml saves it and deletes the one it restored."""
    action_session.export(db, key, folder, settings.data_dir)
    set_output(settings, "session", "saved")


def _requester(requester_id: int | None) -> str | None:
    """The requester as the relay's ledger names them (bot/episode/model_channel.py)."""
    return str(requester_id) if requester_id else None


def session_folder(settings: Settings) -> Path | None:
    """The thread's session cache (action.yml restores and saves it), when the step has one."""
    folder = settings.text("BOT_SESSION_CACHE_DIR")
    return Path(folder) if folder else None


def scrub_credential_files(data_dir: Path) -> int:
    """Reduce the CLI homes to the session state each CLI resumes from (an allowlist, see
    bot/episode/resume_state.py), never following a link: the data dir is saved to the Actions cache,
    which other workflow runs of the repository can restore."""
    return scrub_homes(data_dir / "homes")


def report(outcome: StepOutcome, settings: Settings) -> None:
    """Step outputs, the step summary and one log line (never the comment's text)."""
    set_output(settings, "status", outcome.status)
    set_output(settings, "answer", outcome.answer)
    set_output(settings, "comment-id", "" if outcome.comment_id is None else str(outcome.comment_id))
    if outcome.status == "ignored":
        print(f"bot: nothing to do ({outcome.reason}).")
        return
    print(f"bot: {outcome.status}; answer in comment {outcome.comment_id}.")
    add_summary(settings, f"### @{settings.handle}: {outcome.status}\n\n{outcome.answer}\n")


def set_output(settings: Settings, name: str, value: str) -> None:
    """Append to $GITHUB_OUTPUT with a random delimiter, safe for model-written text."""
    path = settings.text("GITHUB_OUTPUT")
    if not path:
        return
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def add_summary(settings: Settings, markdown: str) -> None:
    path = settings.text("GITHUB_STEP_SUMMARY")
    if not path:
        return
    data = markdown.encode()
    if len(data) > MAX_SUMMARY_BYTES:
        markdown = data[:MAX_SUMMARY_BYTES].decode("utf-8", "ignore") + "\n\n… (truncated)\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown)
