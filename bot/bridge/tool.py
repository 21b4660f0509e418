"""One bridge tool as one object: its name, what the model reads about it, the JSON schema of its
arguments and the handler that does it, declared together (`Tool`); the tools themselves are
listed in bot/bridge/catalog.py.

A handler is `async (CallContext, args) -> (text for the model, detail for the record)`; it may
raise `Refusal` (the policy said no) or `ToolFailure` (admitted, but it could not be done). The
server around it (auth, halt, schema check, budget, recording) is bot/bridge/server.py.
"""
from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from jsonschema import Draft202012Validator, ValidationError

from bot.bridge.admission import Admission, Refusal
from bot.bridge.tools import ProgressThrottle, RunSandbox
from bot.review.findings import Collector

Outcome = tuple[str, dict]
PATH = {"type": "string", "description": "file path relative to the repository root"}


class Labeler(Protocol):
    """A run's grant to label (bot/bridge/label_tools.py): the repository's labels, read bounded, and
    the one issue or pull request it may label."""

    async def known(self) -> tuple[str, ...]: ...

    async def add(self, names: list[str]) -> list[str]:
        """Add the labels to the run's issue or pull request; the labels it carries now."""

    def added(self) -> frozenset[str]:
        """The labels this run added so far (its episodes share the labeler), against the run's cap."""


@dataclass(frozen=True)
class CallContext:
    """What one episode's tools may use: its policy and the services the bridge was given."""

    policy: Admission
    scratch_root: Path
    progress: ProgressThrottle
    track_run: Callable[[object | None], None]
    run_turn: asyncio.Lock  # one `run` sandbox at a time: each may hold the episode's full caps
    halted: Callable[[], str | None]
    read_dirs: tuple[str, ...] = ()
    read_thread: Callable[[], Awaitable[str]] | None = None
    run_sandbox: RunSandbox | None = None
    review: Collector | None = None  # a review run's collector: its tools are offered
    labels: Labeler | None = None  # the run may label its issue (an automation's `may: [label]`)

    def refuse_if_halted(self) -> None:
        reason = self.halted()
        if reason is not None:
            raise halted_refusal(reason)


Handler = Callable[[CallContext, dict], Awaitable[Outcome]]


def halted_refusal(reason: str) -> Refusal:
    return Refusal("halted", f"the episode was halted ({reason}); stop now.")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per tool
class Tool:
    name: str
    description: str
    schema: dict
    handle: Handler
    needs: str = ""  # offered only when the episode has it: "review" (a collector), "labels" (a labeler)

    @property
    def review_only(self) -> bool:
        return self.needs == "review"

    def check(self, args: dict) -> None:
        """Refuse arguments that do not fit the schema, saying what is wrong so the model can fix it."""
        errors = list(_validator(self).iter_errors(args))
        if errors:
            raise Refusal("bad_args", _explain(self, args, errors))


def schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


@functools.cache
def _validator(tool: Tool) -> Draft202012Validator:
    return Draft202012Validator(tool.schema)


def _explain(tool: Tool, args: object, errors: list[ValidationError]) -> str:
    """One sentence a model can act on: what is missing or unexpected, else the first wrong value."""
    if not isinstance(args, dict):
        return "arguments must be a JSON object."
    properties = tool.schema["properties"]
    missing = [name for name in tool.schema["required"] if name not in args]
    extra = [name for name in args if name not in properties]
    if missing or extra:
        return f"{tool.name}: missing {missing or 'nothing'}, unexpected {extra or 'nothing'}."
    wrong = next((e for e in errors if e.path), errors[0])
    name = str(wrong.path[0]) if wrong.path else ""
    expected = properties.get(name, {}).get("type", "")
    if wrong.validator == "type" and expected:
        article = "an" if expected[0] in "aeiou" else "a"
        return f"{tool.name}: {name} must be {article} {expected}."
    return f"{tool.name}: {name or 'arguments'}: {wrong.message}."
