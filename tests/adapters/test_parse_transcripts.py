"""parse() and finish() over every recorded transcript (tests/fixtures/cli, from data/cli-transcripts)."""
from __future__ import annotations

from pathlib import Path

import pytest

from adapters import base
from adapters.base import Credentials, EventKind
from tests.adapters.helpers import FIXTURES, bridge, episode, parse_all, replay, transcript

K = EventKind
STREAMS = sorted(p.name for p in FIXTURES.glob("*.jsonl") if p.name != "gemini-json.jsonl")


@pytest.mark.parametrize("name", STREAMS)
def test_every_recorded_line_is_understood(name):
    """No line of a recorded stream falls through to the unrecognised-line fallback."""
    agent = name.split("-")[0]
    for line in transcript(name):
        events = parse_all(agent, [line])
        assert events and not (events[0].kind == K.PROGRESS and events[0].text.startswith("{")), line


# --- Claude Code -----------------------------------------------------------------------------

def test_claude_basic_sequence():
    """A plain turn is session, text, usage, done."""
    kinds = [e.kind for e in parse_all("claude", transcript("claude-basic.jsonl"))]
    assert kinds == [K.SESSION, K.TEXT, K.USAGE, K.DONE]


def test_claude_answer_comes_from_result():
    """The final text, session id, usage and cost come from the result line."""
    result = replay("claude", "claude-basic.jsonl")
    assert (result.ok, result.text, result.session_id, result.usage.total_tokens, result.usage.cost_usd) == (
        True, "MOCK_ANSWER[anthropic] prior_assistant_turns=0 last_user=Say hello",
        "ab6bb313-2e8a-46dc-a533-79b1b94eca64", 15, 0.000175)


def test_claude_resume_keeps_the_session_id():
    """The resumed transcript reports the same session id and the re-sent history."""
    result = replay("claude", "claude-resume.jsonl")
    assert result.session_id == "ab6bb313-2e8a-46dc-a533-79b1b94eca64"
    assert "prior_assistant_turns=1" in result.text


def test_claude_mcp_tool_call_is_parsed():
    """A bridged call shows as tool_use then tool_result with the mcp__ name."""
    events = parse_all("claude", transcript("claude-mcp.jsonl"))
    tools = [(e.kind, e.tool) for e in events if e.kind in (K.TOOL_USE, K.TOOL_RESULT)]
    assert tools == [(K.TOOL_USE, "mcp__mockmcp__mock_echo"), (K.TOOL_RESULT, None)]


def test_claude_is_error_is_a_terminal_failure():
    """is_error:true (with subtype still "success") ends as a provider failure."""
    result = replay("claude", "claude-fail400.jsonl", exit_code=1)
    assert (result.ok, result.failure, result.error) == (
        False, "provider", "API Error: 400 mock forced failure (FAIL_400)")


def test_claude_failed_bridge_in_strict_mode_is_an_error(tmp_path):
    """init.mcp_servers status "failed" for the bot's server fails the episode in strict mode."""
    ep = episode(tmp_path, bridge=bridge())
    lines = [line.replace(b'"mockmcp"', b'"bot"') for line in transcript("claude-mcp-badtoken.jsonl")]
    adapter = base.get("claude")
    result = adapter.finish(ep, [e for line in lines for e in adapter.parse(line)], 0, "", None)
    assert (result.ok, result.failure) == (False, "bridge")


def test_claude_permission_denial_is_recorded():
    """A denied native Bash call is kept in the done event's permission_denials."""
    done = [e for e in parse_all("claude", transcript("claude-shell-dontask.jsonl")) if e.kind == K.DONE]
    assert done[0].data["permission_denials"] == ["Bash"]


# --- Codex -----------------------------------------------------------------------------------

def test_codex_basic_sequence():
    """thread.started is the session; the model-metadata item is a non-terminal error."""
    events = parse_all("codex", transcript("codex-basic.jsonl"))
    assert [e.kind for e in events] == [K.SESSION, K.ERROR, K.PROGRESS, K.TEXT, K.USAGE, K.DONE]
    assert not events[1].terminal


def test_codex_answer_prefers_the_last_message_file():
    """The final answer is the -o file's content when present."""
    result = replay("codex", "codex-basic.jsonl", last_message="from the file\n")
    assert (result.ok, result.text) == (True, "from the file")


def test_codex_answer_falls_back_to_last_agent_message():
    """Without a last-message file the last agent_message is the answer."""
    result = replay("codex", "codex-basic.jsonl")
    assert result.text == "MOCK_ANSWER[responses] prior_assistant_turns=0 last_user=Say hello"


def test_codex_turn_failed_is_terminal_with_readable_message():
    """turn.failed ends the episode with the provider's message, not its JSON wrapper."""
    result = replay("codex", "codex-fail400.jsonl", exit_code=1)
    assert (result.ok, result.failure, result.error) == (False, "provider", "mock forced failure (FAIL_400)")


def test_codex_usage_from_turn_completed():
    """turn.completed usage is summed into the result."""
    result = replay("codex", "codex-mcp.jsonl")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (20, 10)


def test_codex_required_bridge_failure_is_a_bridge_error(tmp_path):
    """Exit 1 with the required-MCP message and empty stdout is a bridge failure in strict mode."""
    result = replay("codex", "codex-mcp-badtoken-required.jsonl", exit_code=1,
                    stderr="Error: required MCP servers failed to initialize: bot", ep=episode(tmp_path, bridge=bridge()))
    assert (result.ok, result.failure) == (False, "bridge")


def test_codex_mcp_call_named_like_claude():
    """An mcp_tool_call item is reported as mcp__<server>__<tool>."""
    tools = [e.tool for e in parse_all("codex", transcript("codex-mcp.jsonl")) if e.kind == K.TOOL_USE]
    assert tools == ["mcp__mockmcp__mock_echo"]


# --- OpenCode --------------------------------------------------------------------------------

def test_opencode_answer_is_last_text_part():
    """With no result event, the last text part is the answer and exit 0 is success."""
    result = replay("opencode", "opencode-mcp.jsonl")
    assert result.ok and result.text.startswith("MOCK_ANSWER[chat] prior_assistant_turns=1 tool_result=")


def test_opencode_usage_sums_every_step():
    """Each step_finish's tokens and cost are added up."""
    result = replay("opencode", "opencode-mcp.jsonl")
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.cost_usd) == (20, 10, 0)


def test_opencode_error_event_is_terminal():
    """The APIError line ends the episode with its message and HTTP status."""
    result = replay("opencode", "opencode-fail400.jsonl", exit_code=1)
    assert (result.ok, result.failure, result.error) == (
        False, "provider", "mock forced failure (FAIL_400) (HTTP 400)")


def test_opencode_rejected_tool_is_a_tool_error():
    """A permission-rejected bash call shows as a tool_result carrying the rejection."""
    results = [e for e in parse_all("opencode", transcript("opencode-shell-ask.jsonl")) if e.kind == K.TOOL_RESULT]
    assert results[0].tool == "bash" and "rejected permission" in results[0].error


def test_opencode_turn_without_text_is_not_green():
    """A turn that ends after a rejected tool with no text is an error, never a silent success."""
    result = replay("opencode", "opencode-shell-ask.jsonl")
    assert (result.ok, result.failure) == (False, "empty")


# --- Gemini ----------------------------------------------------------------------------------

def test_gemini_basic_sequence():
    """init, the user's message, an assistant delta, result."""
    kinds = [e.kind for e in parse_all("gemini", transcript("gemini-basic.jsonl"))]
    assert kinds == [K.SESSION, K.PROGRESS, K.TEXT, K.USAGE, K.DONE]


def test_gemini_answer_concatenates_deltas():
    """The answer is the assistant deltas joined, after the last tool exchange."""
    lines = transcript("gemini-mcp.jsonl")
    delta = [line for line in lines if b'"delta":true' in line][0]
    result_line = lines[-1]
    doubled = lines[:-1] + [delta.replace(b'MOCK_ANSWER', b' and more')] + [result_line]
    adapter = base.get("gemini")
    events = [e for line in doubled for e in adapter.parse(line)]
    text = adapter.finish(episode(Path("/x")), events, 0, "", None).text
    assert text.startswith("MOCK_ANSWER[gemini] prior_assistant_turns=1") and " and more" in text


def test_gemini_error_status_is_terminal():
    """result.status "error" ends the episode with the API error message."""
    result = replay("gemini", "gemini-fail400.jsonl", exit_code=144)
    assert (result.ok, result.failure) == (False, "provider") and "FAIL_400" in result.error


def test_gemini_exit_41_names_the_credentials():
    """Exit 41 with empty stdout is an auth failure naming the key variable."""
    result = replay("gemini", "gemini-nosettings-fails-rc41.jsonl", exit_code=41)
    assert (result.ok, result.failure) == (False, "auth") and "GEMINI_API_KEY" in result.error


def test_gemini_http_status_exit_code_is_decoded():
    """Exit 144 without a result line is reported as HTTP 400 from the provider."""
    result = base.get("gemini").finish(episode(Path("/x")), [], 144, "", None)
    assert result.error == "the model provider answered HTTP 400 (gemini exit 144)"


def test_gemini_usage_from_result_stats():
    """result.stats tokens become the usage."""
    result = replay("gemini", "gemini-mcp.jsonl")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 15)


# --- shared ----------------------------------------------------------------------------------

def test_nonzero_exit_with_nothing_parsed_is_an_error_with_stderr():
    """An empty stdout and exit 1 becomes an error quoting stderr's last line."""
    result = base.get("claude").finish(episode(Path("/x")), [], 1, "boom: no such model\n", None)
    assert (result.ok, result.failure, result.error) == (
        False, "exit", "claude exited with code 1 before printing anything: boom: no such model")


def test_secrets_are_redacted_from_stderr_and_errors(tmp_path):
    """A credential value printed on stderr never reaches the Result."""
    ep = episode(tmp_path, credentials=Credentials(env={"ANTHROPIC_API_KEY": "sk-secret-value-123"}))
    result = base.get("claude").finish(ep, [], 1, "bad key sk-secret-value-123\n", None)
    assert "sk-secret-value-123" not in result.stderr_tail + result.error


@pytest.mark.parametrize("agent,stderr", [
    ("claude", "No conversation found with session ID: 0000\n"),
    ("codex", "Error: thread/resume: thread/resume failed: no rollout found for thread id 0000 (code -32600)\n"),
    ("opencode", "\x1b[91m\x1b[1mError: \x1b[0mSession not found\n"),
    ("gemini", "Error resuming session: No previous sessions found for this project.\n")])
def test_lost_session_on_resume_is_session_unknown(agent, stderr, tmp_path):
    """Each CLI's 'no such session' on --resume is classified so the bot can start fresh."""
    result = base.get(agent).finish(episode(tmp_path, resume_session="0000"), [], 1, stderr, None)
    assert (result.ok, result.failure) == (False, "session_unknown")


def test_claude_rejected_key_is_auth():
    """A result with api_error_status 401 is an 'auth' failure."""
    lines = [line.replace(b'"api_error_status":400', b'"api_error_status":401')
             for line in transcript("claude-fail400.jsonl")]
    result = base.get("claude").finish(episode(Path("/x")), parse_all("claude", lines), 1, "", None)
    assert result.failure == "auth"


def test_claude_api_retry_is_a_non_terminal_error():
    """system/api_retry says the provider failed and Claude is retrying; it does not end the episode."""
    line = (b'{"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":500,'
            b'"error_status":529,"error":"overloaded","session_id":"s"}')
    event, = base.get("claude").parse(line)
    assert (event.kind, event.terminal, event.error) == (
        K.ERROR, False, "the provider answered 529 (overloaded); retry 1 of 3")


def test_codex_unauthorized_turn_is_auth():
    """turn.failed with 'unexpected status 401' is an 'auth' failure."""
    line = b'{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: bad key"}}'
    result = base.get("codex").finish(episode(Path("/x")), parse_all("codex", [line]), 1, "", None)
    assert (result.failure, result.error) == ("auth", "unexpected status 401 Unauthorized: bad key")


def test_opencode_unauthorized_is_auth():
    """An APIError with statusCode 401 is an 'auth' failure."""
    lines = [line.replace(b'"statusCode":400', b'"statusCode":401') for line in transcript("opencode-fail400.jsonl")]
    assert replay_lines("opencode", lines).failure == "auth"


def test_gemini_unauthorized_is_auth():
    """A result error carrying code 401 is an 'auth' failure."""
    lines = [line.replace(b'\\"code\\":400', b'\\"code\\":401') for line in transcript("gemini-fail400.jsonl")]
    assert replay_lines("gemini", lines).failure == "auth"


def replay_lines(agent, lines):
    return base.get(agent).finish(episode(Path("/x")), parse_all(agent, lines), 1, "", None)
