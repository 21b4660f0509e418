"""Every text the bot says that is not an agent's answer: help, status, refusals, stops, pauses.
One module, so the service, the Action and `bot run` word each case the same way."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from adapters import base as adapters
from bot.record import inert
from bot.relay.budgets import Spend
from bot.relay.unavailable import ProviderUnavailable, duration

if TYPE_CHECKING:
    from bot.job.conversations import Session

WRITE_LEVELS = ("write", "maintain", "admin")


class Usage(Protocol):
    """A command as help shows it (bot/intake/grammar.py: Usage, one rank above this module)."""

    @property
    def form(self) -> str: ...
    @property
    def does(self) -> str: ...


def help_text(handle: str, agents: Sequence[str], default_agent: str, usages: Sequence[Usage]) -> str:
    """The usage, one line per command of `usages` (bot/intake/grammar.py: USAGES, the grammar's
    own table, so that no command it knows is missing here)."""
    names = ", ".join(f"`{a}`" for a in agents)
    commands = "".join(f"- `@{handle} {usage.form}`: {usage.does}\n" for usage in usages)
    return (f"**Usage** — on its own line: `@{handle} [agent] [new] <request>`\n\n"
            f"- agents: {names} (default `{default_agent}`)\n{commands}\n"
            f"Only people with write access to the repository can start a run.")


def status(conversation: str, sessions: Iterable[Session], jobs: Iterable[dict[str, Any]],
           spend: Mapping[str, Spend] | None = None, requester: str | None = None, paused: str | None = None) -> str:
    """The thread's pause (`paused`: its `paused_line`), sessions (one per agent), its running and
    queued jobs, and the model spend the relay's ledger holds (`spend`: window -> Spend, for the
    windows "thread" and "requester_day")."""
    lines = [f"**Status of {conversation}**", "", *([paused] if paused else [])]
    for session in sessions:
        shown = inert.code((session.session_id or "?")[:12])  # the CLI reported it
        lines.append(f"- `{session.agent}`: session {shown}, {session.turns} turn(s)")
    episodes = [j for j in jobs if j["kind"] == "episode"]
    running = sum(1 for j in episodes if j["status"] == "running")
    lines.append(f"- jobs: {running} running, {len(episodes) - running} queued")
    labels = {"thread": "this thread", "requester_day": f"@{requester} today (UTC)" if requester else None}
    for window, label in labels.items():
        if label and spend and window in spend:
            lines.append(f"- model spend, {label}: {_spend(spend[window])}")
    return "\n".join(lines)


def _spend(spend: Spend) -> str:
    unpriced = f" ({spend.unpriced_calls} unpriced calls)" if spend.unpriced_calls else ""
    return f"{spend.tokens:,} tokens, ${spend.usd:.4f}{unpriced}"


def not_allowed(levels: Sequence[str] = WRITE_LEVELS) -> str:
    return (f"Sorry, only people with {' or '.join(levels)} permission on this repository can "
            f"ask me to run an agent here.")


def not_allowed_once(levels: Sequence[str] = WRITE_LEVELS) -> str:
    return not_allowed(levels) + " (This note is shown once per thread.)"


def unknown_agent(name: str | None, agents: Sequence[str]) -> str:
    """`name` is the word the user typed: quoted inert (bot/record/inert.py)."""
    return f"I don't know an agent called {inert.code(name)}. Available: " + ", ".join(f"`{a}`" for a in agents) + "."


def agent_not_available(agent: str, agents: Sequence[str]) -> str:
    return f"The agent `{agent}` is not available here. Available: " + ", ".join(f"`{n}`" for n in agents)


def agent_not_allowed(agent: str, allowed: Sequence[str]) -> str:
    return (f"This repository does not allow `{agent}` (`.github/bot.yml` allows "
            + ", ".join(f"`{n}`" for n in allowed) + ").")


def nothing_running() -> str:
    return "Nothing is running in this thread."


def stop_in_actions() -> str:
    return ("In GitHub Actions mode each request is its own workflow run: cancel the running "
            "run from the repository's Actions tab to stop it.")


def stopped(by: str | None, *, started: bool) -> str:
    """Names who stopped it (after their permission was checked); at a terminal, nobody."""
    who = f" by @{by}" if by else ""
    return f"⏹️ Stopped{who} before it started." if not started else f"⏹️ Stopped{who}."


def paused(by: str, handle: str, *, ended: bool = False) -> str:
    """`@bot pause` done: what it holds back, what it does not, and how it ends; `ended`: it stopped
    such a run under way."""
    stopped_too = " The run of that kind under way here was stopped." if ended else ""
    return (f"⏸️ Paused by @{by}: no automation and no push-triggered review runs here until "
            f"`@{handle} resume`.{stopped_too} Commands that mention me still run.")


def paused_line(by: str, since: str, handle: str) -> str:
    """`@bot status` of a paused thread (`since`: when, in UTC)."""
    return (f"- paused by @{by} since {since}: no automation and no push-triggered review runs here "
            f"until `@{handle} resume`")


def already_paused(by: str, handle: str) -> str:
    return f"Already paused by @{by}: `@{handle} resume` ends the pause."


def resumed(by: str) -> str:
    return f"▶️ Resumed by @{by}: automations and push-triggered reviews run here again."


def not_paused() -> str:
    return "This thread is not paused: nothing to resume."


def pause_in_actions() -> str:
    return ("In GitHub Actions mode there is no pause: each request is its own workflow run, so edit "
            "or disable the workflow to stop what runs without a mention. Nothing was done.")


def not_allowed_to(login: str, command: str, levels: Sequence[str] = WRITE_LEVELS) -> str:
    """A command that acts (`stop`, …) asked by someone GitHub does not let act here."""
    return (f"Sorry @{login}, only people with {' or '.join(levels)} permission on this repository can "
            f"use `{command}` here, so nothing was done.")


def unknown_command(command: str) -> str:
    return f"I don't know how to do `{command}`, so nothing was done."


def shutting_down() -> str:
    return "⏹️ Stopped: the service is shutting down; this request will run again."


def run_failed(exc: BaseException) -> str:
    return f"❌ The run failed: {type(exc).__name__}: {exc}"


def permission_check_failed(requester: str, repo: str, exc: BaseException, transient: bool) -> str:
    """GitHub could not say whether the requester may run an agent: nothing ran, and the reply
    says what to do. Only a refusal by GitHub points at the App's permission."""
    lead = f"❌ I could not check @{requester}'s permission on {repo}, so nothing was run"
    if transient:
        return f"{lead}: GitHub did not answer ({type(exc).__name__}: {exc}). Please ask again in a few minutes."
    return (f"{lead}: GitHub answered “{exc}”. The bot's GitHub App needs the **Metadata: read** "
            "permission on this repository; an organization or repository admin can grant it in "
            "the App's installation settings, then ask again.")


PROVIDER_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI", "google": "Google", "chatgpt": "ChatGPT"}
_UNAVAILABLE = {"overloaded": "was overloaded", "quota": "was out of quota", "rate_limited": "was rate limited"}


def agent_name(agent: str) -> str:
    return (adapters.get(agent).title or agent) if agent in adapters.names() else agent


def unavailable_words(agent: str, kind: str) -> str:
    """"Claude was overloaded": why an agent did not answer, from what the relay saw."""
    return f"{agent_name(agent)} {_UNAVAILABLE.get(kind, 'could not be reached')}"


def fell_back(tried: Sequence[tuple[str, str]], answered_by: str, skipped: Sequence[tuple[str, str]] = ()) -> str:
    """The answer's first line when another agent answered: "Claude was overloaded; answered by Codex"."""
    why = "; ".join(unavailable_words(agent, kind) for agent, kind in tried)
    return f"↪️ {why}; answered by {agent_name(answered_by)}." + _skipped(skipped)


def provider_unavailable(agent: str, found: ProviderUnavailable, *, fallback: Sequence[str] = (),
                         tried: Sequence[tuple[str, str]] = (), skipped: Sequence[tuple[str, str]] = ()) -> str:
    """No agent could answer: the failure, the provider's own words (inert) and when to retry."""
    provider = PROVIDER_NAMES.get(found.provider, found.provider or "its provider")
    said = f" “{inert.text(found.words, 300)}”" if found.words else ""
    earlier = "".join(f"{unavailable_words(a, k)}; " for a, k in tried)
    lines = [f"❌ {earlier}{unavailable_words(agent, found.kind)}: {provider} answered HTTP {found.status}{said}. "
             f"{_when(found)}"]
    if not fallback:
        lines.append("No other agent is set to answer in its place: `fallback: [AGENT, …]` in `.github/bot.yml` "
                     "names the agents to try next.")
    elif skipped and not tried:
        lines.append("No fallback agent could take the turn." + _skipped(skipped))
    elif skipped:
        lines.append(_skipped(skipped).strip())
    return "\n\n".join(lines)


def _when(found: ProviderUnavailable) -> str:
    if found.retry_after_s is not None:
        return f"Try again in {duration(found.retry_after_s)} (the provider's Retry-After)."
    if found.kind == "quota":
        return "Try again once the account's quota or billing allows it."
    return "Try again in a few minutes."


def _skipped(skipped: Sequence[tuple[str, str]]) -> str:
    if not skipped:
        return ""
    return " Not tried: " + ", ".join(f"{agent_name(a)} ({why})" for a, why in skipped) + "."
