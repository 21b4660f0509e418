"""The comment grammar: `@bot [agent] [new] <request>`, `@bot help|status|stop|pause|resume`, and
reviews of a pull request (docs/reviews.md): `@bot [agent] review [focus]`, `@bot review with claude, codex
[focus]`, `@bot claude, codex review [focus]` (a review is a run with `review` set and its `agents`).

A command is a line that starts with the whole-word mention, where GitHub renders that mention as
live text (bot/record/live_mentions.py: not in code of any kind, HTML, a link or a quote). The
rest of that line, plus every line after it, is the request.
"""
from __future__ import annotations

import difflib
import re
import typing
from dataclasses import dataclass
from typing import Literal

from adapters import base as adapters
from bot.record import live_mentions


@dataclass(frozen=True)
class Usage:
    """One command word as `@bot help` shows it (bot/job/replies.py: help_text)."""

    word: str
    form: str  # what follows the mention
    does: str


# Every word the grammar answers to, in the order help lists them: help is written from this table.
USAGES = (
    Usage("new", "[agent] new <request>", "starts a fresh session instead of resuming this thread's"),
    Usage("review", "[agent] review [focus]", "reviews a pull request, with comments on its lines "
          "(`review with <agent>, <agent>` asks several agents, `review all` starts over on the whole pull request)"),
    Usage("status", "status", "shows this thread's sessions, queue and model spend"),
    Usage("stop", "stop", "stops the running job"),
    Usage("pause", "pause", "pauses this thread: no automation and no push-triggered review runs here "
          "until `resume` (mentions still run)"),
    Usage("resume", "resume", "ends the pause: automations and push-triggered reviews run here again"),
    Usage("help", "help", "shows this"),
)
CONTROL_WORDS = tuple(usage.word for usage in USAGES if usage.form == usage.word)

# What a comment can ask for: an agent's run, or a command word alone. A stored spec naming any
# other kind is refused (bot/intake/spec.py), and each acting command has its handler
# (bot/service/commands.py: HANDLERS, checked complete by a test).
ControlKind = Literal["status", "stop", "pause", "resume", "help"]
ActingKind = Literal["stop", "pause", "resume"]  # commands that change something, checked before they act
CommandKind = Literal["run", "unknown_agent", "status", "stop", "pause", "resume", "help"]

# Names people may type that are not (yet) agents here: answered with the agent list, not run.
OTHER_AGENT_NAMES = frozenset({"copilot", "cursor", "aider", "openhands", "devin", "sweep", "amp",
                               "goose", "qwen", "kimi", "grok", "deepseek", "gpt", "chatgpt",
                               "openai", "anthropic", "google", "mistral", "llama", "jules", "cline"})


@dataclass(frozen=True)
class Command:
    kind: CommandKind
    agent: str | None = None  # None: the repository's or operator's default
    new_session: bool = False
    request: str = ""
    unknown_name: str | None = None
    review: bool = False  # a pull-request review (bot/job/review_job.py)
    agents: tuple[str, ...] = ()  # a review's agents, in the order named; () for the default one


def _control_kind(word: str) -> ControlKind:
    for kind in typing.get_args(ControlKind):
        if kind == word:
            return typing.cast(ControlKind, kind)
    raise ValueError(f"{word!r} is not a command word")


def may_mention(body: str | None, handle: str) -> bool:
    """False when `body` cannot hold a command for `@handle`: the mention does not appear in it at
    all (ASCII case folded, as live_mentions compares it; a Unicode look-alike folding to a letter
    can only make this say True). Cheap, so the CommonMark parse runs only where the handle does."""
    if not body:
        return False
    return "@" + handle.lower() in body.lower()


def parse(body: str | None, handle: str, agents: tuple[str, ...] | list[str]) -> Command | None:
    """The first command addressed to `@handle` in a comment body, or None."""
    if not may_mention(body, handle):
        return None
    text = live_mentions.normalised(body)
    first = next(live_mentions.live_mentions(text, handle), None)
    if first is None:
        return None
    index, rest = first
    following = text.split("\n")[index + 1:]
    return _command("\n".join([rest.strip(), *following]).strip(), tuple(agents))


def _command(text: str, agents: tuple[str, ...]) -> Command:
    word, rest = _split_first(text)
    lowered = word.lower()
    if lowered in CONTROL_WORDS:
        return Command(kind=_control_kind(lowered))
    review = _review(text, agents)
    if review is not None:
        return review
    agent = adapters.canonical(lowered) if lowered else None
    if agent in agents:
        text = rest
    elif lowered and _looks_like_agent_name(lowered, agents):
        return Command(kind="unknown_agent", unknown_name=word)
    else:
        agent = None
    new_word, after_new = _split_first(text)
    new_session = new_word.lower() == "new"
    request = after_new if new_session else text
    if not request:
        return Command(kind="help")
    return Command(kind="run", agent=agent, new_session=new_session, request=request)


def _split_first(text: str) -> tuple[str, str]:
    parts = text.split(None, 1)
    if not parts:
        return "", ""
    word = parts[0].rstrip(":,")
    return word, parts[1].strip() if len(parts) > 1 else ""


def _looks_like_agent_name(word: str, agents: tuple[str, ...]) -> bool:
    base = re.split(r"[-.\d]", word, maxsplit=1)[0]
    if word in OTHER_AGENT_NAMES or base in OTHER_AGENT_NAMES:
        return True
    return bool(difflib.get_close_matches(word, agents, n=1, cutoff=0.75))


_REVIEW = re.compile(r"review\b[:,.]?\s*", re.IGNORECASE)
_WITH = re.compile(r"with\s+", re.IGNORECASE)
_ALL = re.compile(r"all\b[:,.]?\s*", re.IGNORECASE)
_NAME = re.compile(r"\s*([A-Za-z][\w.-]*)")
_SEPARATOR = re.compile(r"\s*(?:,|&|\band\b)\s*", re.IGNORECASE)


def _review(text: str, agents: tuple[str, ...]) -> Command | None:
    """`[names] review [with names] [focus]`, or None when the text is not a review request."""
    named, rest, unknown = _agent_list(text, agents)
    match = _REVIEW.match(rest)
    if match is None or (unknown and not named):
        return None
    rest = rest[match.end():]
    if not named and (with_ := _WITH.match(rest)):
        named, after, unknown = _agent_list(rest[with_.end():], agents)
        if named:
            rest = after
    if unknown:
        return Command(kind="unknown_agent", unknown_name=unknown)
    chosen = tuple(dict.fromkeys(named))
    whole = _ALL.match(rest)  # `review all`: start over, the whole pull request in a fresh session
    return Command(kind="run", agent=chosen[0] if chosen else None, new_session=bool(whole),
                   request=rest[whole.end():].strip() if whole else rest.strip(), review=True, agents=chosen)


def _agent_list(text: str, agents: tuple[str, ...]) -> tuple[list[str], str, str | None]:
    """Agent names joined by commas or "and" at the start of `text`: (names, the rest, a word in
    the list that only looks like an agent's name)."""
    names: list[str] = []
    position = 0
    while match := _NAME.match(text, position):
        word = match.group(1).rstrip(".")
        name = adapters.canonical(word.lower())
        if name not in agents:
            looks = names and _looks_like_agent_name(word.lower(), agents)
            return names, text[position:].lstrip(" ,&"), word if looks else None
        names.append(name)
        after = match.end()
        separator = _SEPARATOR.match(text, after)
        position = separator.end() if separator else after
        if separator is None:
            return names, text[after:].lstrip(), None
    return names, text[position:].lstrip(), None
