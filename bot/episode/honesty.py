"""Honest failure: a run that cannot be an answer is reported as what it was, with its reason.

Three cases, each decided from what the bot itself saw, never from what the agent says:

- the model provider failed (the adapter's `failure` is `provider` or `auth`): the thread reads
  "the model provider failed: <reason>", not a half answer;
- strict mode and the CLI never listed the bridge's tools (the bridge counts `tools/list`
  requests): the model was never offered the bot's tools, so whatever it wrote was written blind
  and cannot have changed anything: "the agent was never given the bot's tools";
- the answer describes changes while the record holds no tool call of any kind (no bridged call,
  no native read the CLI reported) and nothing changed: the answer is posted with a warning line.
"""
from __future__ import annotations

import re
from typing import Any

from adapters.base import Result
from bot.record import render

NO_TOOLS = "the agent was never given the bot's tools"
PROVIDER_FAILURES = {"provider": "the model provider failed", "auth": "the model provider rejected the credentials"}
# Failures that explain themselves (or come first): a missing tool list is not their cause.
_OWN_REASON = ("provider", "auth", "cancelled", "timeout", "killed", "refused", "missing", "session_unknown",
               "exit", "config")
_CLAIM = re.compile(
    r"\b(?:I(?:'ve|\s+have)?|we(?:'ve|\s+have)?)\s+(?:now\s+|also\s+|just\s+)?"
    r"(?:fixed|changed|updated|edited|modified|created|added|removed|deleted|rewrote|refactored|"
    r"implemented|renamed|replaced|applied|committed|pushed)\b"
    r"|\b(?:has|have)\s+been\s+(?:fixed|changed|updated|modified|created|added|removed|applied)\b"
    r"|(?:^|\n)\s*(?:[-*]\s+)?(?:fixed|changed|updated|edited|modified|created|added|removed|"
    r"renamed|replaced)\s", re.IGNORECASE)


def require_tools(result: Result, tools_listed: int, *, strict: bool, bridged: bool) -> None:
    """A strict-mode run whose CLI never listed the bridge's tools is a failure saying so."""
    if not strict or not bridged or tools_listed or result.failure in _OWN_REASON:
        return
    why = result.error or f"{result.agent or 'the CLI'} never asked the bridge for them"
    result.ok = False
    result.failure = "bridge"
    result.error = why if why.startswith(NO_TOOLS) else f"{NO_TOOLS} ({why})"


def failure_reason(result: Result) -> str:
    """Why a failed run is not an answer, as the thread should read it."""
    error = render.markdown(result.error) if result.error else "no answer"  # the CLI's words, inert as its answers
    lead = PROVIDER_FAILURES.get(result.failure or "")
    return f"{lead}: {error}" if lead and not error.startswith(lead) else error


def blind_claim(agent: str, text: str, events: list[dict[str, Any]], changed: bool) -> str | None:
    """A warning line when the answer describes changes that no recorded act can back:
    no tool call of any kind in the run's record and no file changed."""
    if changed or not _CLAIM.search(text or ""):
        return None
    acted = any((e["tier"] == "enforced" and e["kind"] == "tool_call")
                or (e["tier"] == "attested" and e["kind"] in ("tool_use", "tool_result")) for e in events)
    if acted:
        return None
    return (f"⚠️ {agent} read nothing and called no tool in this run, yet its answer describes "
            "changes: none were made. Treat the answer as unverified.")
