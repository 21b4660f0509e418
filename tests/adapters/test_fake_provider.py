"""The fake provider speaks each wire API and follows its script (plain HTTP, no CLI)."""
from __future__ import annotations

import json

import httpx
import pytest

from tests.fakes.provider import FakeProvider, call, fail, resolve_tool, say


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


def _sse_payloads(body: str) -> list[dict]:
    return [json.loads(line[6:]) for line in body.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_anthropic_stream_answers_scripted_text(fake):
    """A streamed Messages request gets the scripted text as a text_delta."""
    fake.script(say("hi there"))
    r = httpx.post(f"{fake.url}/v1/messages?beta=true", json={
        "model": "m", "stream": True, "messages": [{"role": "user", "content": "hello"}]})
    deltas = [e["delta"]["text"] for e in _sse_payloads(r.text) if e["type"] == "content_block_delta"]
    assert deltas == ["hi there"]


def test_anthropic_tool_call_resolves_bare_name_to_offered_tool(fake):
    """call("write_file") becomes a tool_use of the offered mcp__bot__write_file."""
    fake.script(call("write_file", {"path": "a"}))
    r = httpx.post(f"{fake.url}/v1/messages", json={
        "model": "m", "stream": True, "tools": [{"name": "Read"}, {"name": "mcp__bot__write_file"}],
        "messages": [{"role": "user", "content": "go"}]})
    starts = [e["content_block"] for e in _sse_payloads(r.text) if e["type"] == "content_block_start"]
    assert starts[0]["name"] == "mcp__bot__write_file"


def test_responses_tool_call_carries_codex_namespace(fake):
    """A Codex namespace tool is called with the namespace field and the inner name."""
    fake.script(call("mcp__bot::run", {"cmd": "ls"}))
    r = httpx.post(f"{fake.url}/v1/responses", json={
        "model": "m", "stream": True, "input": [],
        "tools": [{"type": "namespace", "name": "mcp__bot", "tools": [{"name": "run"}]}]})
    done = [e["item"] for e in _sse_payloads(r.text) if e["type"] == "response.output_item.done"]
    assert (done[0]["namespace"], done[0]["name"], json.loads(done[0]["arguments"])) == \
        ("mcp__bot", "run", {"cmd": "ls"})


def test_chat_title_request_does_not_consume_the_script(fake):
    """OpenCode's title-generation call is auxiliary; the scripted turn waits for the real call."""
    fake.script(say("real answer"))
    title = httpx.post(f"{fake.url}/v1/chat/completions", json={"model": "m", "messages": [
        {"role": "system", "content": "You are a title generator."}, {"role": "user", "content": "x"}]})
    main = httpx.post(f"{fake.url}/v1/chat/completions", json={"model": "m", "messages": [
        {"role": "user", "content": "x"}]})
    assert (title.json()["choices"][0]["message"]["content"],
            main.json()["choices"][0]["message"]["content"]) == ("Fake title", "real answer")


def test_gemini_router_gets_schema_valid_json(fake):
    """Gemini's JSON-schema router call is answered with an object meeting the schema."""
    r = httpx.post(f"{fake.url}/v1beta/models/flash:generateContent", json={
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "OBJECT", "properties": {"complexity_score": {"type": "INTEGER"}}}}})
    text = r.json()["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"complexity_score": 1}


def test_gemini_stream_function_call(fake):
    """streamGenerateContent answers a scripted call with a functionCall part."""
    fake.script(call("mcp_bot_run", {"cmd": "ls"}))
    r = httpx.post(f"{fake.url}/v1beta/models/flash:streamGenerateContent?alt=sse", json={
        "contents": [], "tools": [{"functionDeclarations": [{"name": "mcp_bot_run"}]}]})
    part = _sse_payloads(r.text)[0]["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "mcp_bot_run", "args": {"cmd": "ls"}}}


def test_fail_uses_the_api_error_shape(fake):
    """fail(400) answers with HTTP 400 in the OpenAI error format for chat."""
    fake.script(fail(400, "boom"))
    r = httpx.post(f"{fake.url}/v1/chat/completions", json={"model": "m", "messages": []})
    assert (r.status_code, r.json()["error"]["message"]) == (400, "boom")


def test_empty_script_echoes_history_depth(fake):
    """With no script the reply counts prior assistant turns and echoes the last user text."""
    r = httpx.post(f"{fake.url}/v1/chat/completions", json={"model": "m", "messages": [
        {"role": "user", "content": "one"}, {"role": "assistant", "content": "a"},
        {"role": "user", "content": "two"}]})
    assert r.json()["choices"][0]["message"]["content"] == \
        "MOCK_ANSWER[chat] prior_assistant_turns=1 last_user=two"


def test_unoffered_tool_becomes_explaining_text(fake):
    """A scripted call to a tool the CLI did not offer answers NO_TOOL_OFFERED with the offer."""
    fake.script(call("write_file"))
    r = httpx.post(f"{fake.url}/v1/chat/completions", json={"model": "m", "messages": [],
                                                             "tools": [{"function": {"name": "read"}}]})
    assert r.json()["choices"][0]["message"]["content"] == "NO_TOOL_OFFERED write_file tools=[read]"


def test_requests_are_recorded_with_their_reply(fake):
    """Every model request is recorded with the reply it got."""
    fake.script(say("x"))
    httpx.post(f"{fake.url}/v1/messages", json={"model": "m", "messages": []})
    assert [(r.api, r.reply.text) for r in fake.main_requests()] == [("anthropic", "x")]


def test_resolve_tool_refuses_ambiguous_suffix():
    """A bare name matching two offered tools is not guessed."""
    assert resolve_tool("run", ["mcp__a__run", "mcp__b__run"]) is None


def _code_mode_request(fake, *, deferred: str = "") -> list[dict]:
    """A request shaped like Codex's default (code-mode) model's: no `tools`, an `exec` tool in an
    additional_tools item whose description declares the nested tools."""
    exec_tool = {"type": "custom", "name": "exec", "description":
                 "### `apply_patch`\nexec tool declaration:\n```ts\n"
                 "declare const tools: { apply_patch(input: string): Promise<unknown>; };\n```\n"}
    developer = {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": f"<tools>\nDeferred tool namespaces:\n- {deferred}\n</tools>"}]}
    r = httpx.post(f"{fake.url}/v1/responses", json={"model": "m", "stream": True, "input": [
        {"type": "additional_tools", "role": "developer",
         "tools": [{"type": "namespace", "name": "functions", "tools": [exec_tool]}]}, developer]})
    return [e["item"] for e in _sse_payloads(r.text) if e["type"] == "response.output_item.done"]


def test_code_mode_nested_tool_is_called_through_exec(fake):
    """A tool reachable only inside code mode's `exec` is called the way the model does: an
    `exec` custom tool call whose JavaScript calls tools.<name> and returns its result."""
    fake.script(call("apply_patch", {"input": "*** Begin Patch"}))
    item = _code_mode_request(fake)[0]
    assert (item["type"], item["namespace"], item["name"]) == ("custom_tool_call", "functions", "exec")
    assert 'await tools.apply_patch("*** Begin Patch")' in item["input"]


def test_code_mode_deferred_tool_is_not_offered(fake):
    """A tool only named under a deferred namespace (the model would have to search for it) is
    not offered: the reply says so."""
    fake.script(call("save_file", {"path": "a"}))
    item = _code_mode_request(fake, deferred="mcp__bot")[0]
    assert item["content"][0]["text"].startswith("NO_TOOL_OFFERED save_file tools=[functions::exec]")


def test_exec_output_list_reads_as_its_text(fake):
    """Code mode's exec answers with content items; tool_result joins their text."""
    httpx.post(f"{fake.url}/v1/responses", json={"model": "m", "input": [
        {"type": "custom_tool_call_output", "call_id": "c", "output": [
            {"type": "input_text", "text": "Script completed"}, {"type": "input_text", "text": "hi"}]}]})
    assert fake.main_requests()[0].tool_result == "Script completed\nhi"


def test_provider_run_tools_are_listed(fake):
    """Tools the provider would run itself (web search, grounding) are reported apart."""
    httpx.post(f"{fake.url}/v1/responses", json={"model": "m", "input": [],
                                                 "tools": [{"type": "web_search", "external_web_access": False}]})
    httpx.post(f"{fake.url}/v1beta/models/flash:generateContent", json={
        "contents": [], "tools": [{"googleSearch": {}}]})
    assert [r.provider_tools for r in fake.main_requests()] == [["web_search"], ["googleSearch"]]


def test_resolve_tool_at_server_names_the_bridge_tool_not_a_native_namesake():
    """`@bot/read_file` is the bot server's read_file in each CLI's spelling, never the native one."""
    for bridged_name in ("mcp__bot__read_file", "mcp_bot_read_file", "bot_read_file", "mcp__bot::read_file"):
        assert resolve_tool("@bot/read_file", ["read_file", bridged_name, "mcp_other_read_file"]) == bridged_name
    assert resolve_tool("@bot/read_file", ["read_file"]) is None
