"""`bot run` reads like a terminal program: one line per step and per tool call, the answer once,
a short provenance, a live status line only on a terminal, and JSON for machines."""
from __future__ import annotations

import json
import re

import jsonschema
import pytest

from tests.cli.conftest import visible
from tests.fakes.provider import call, say

pytestmark = pytest.mark.e2e
MARKUP = ("<details>", "<!--", "bot:run", "is on it", "| tier |", "- [x]", "- [ ]")
ANSWER = "Saved the note for you."
STATUS_LINE = re.compile(r"\r\x1b\[2K\S+ codex is working · \d+ s")


def script_two_tools(provider) -> None:
    provider.script(call("read_file", {"path": "hello.py"}), call("save_file", {"path": "notes.md", "content": "hi\n"}),
                    say(ANSWER))


def test_through_a_pipe_each_tool_is_one_line_with_its_outcome(bot):
    script_two_tools(bot.provider)
    done = bot.run("write a note")
    assert done.returncode == 0, done.stderr
    tools = [line for line in done.stderr.splitlines() if line.startswith(("✓", "✗"))]
    assert tools == ["✓ read_file    hello.py", "✓ save_file    notes.md"]


def test_through_a_pipe_the_answer_is_shown_once_without_comment_markup(bot):
    script_two_tools(bot.provider)
    done = bot.run("write a note")
    shown = done.stdout + done.stderr
    assert shown.count(ANSWER) == 1
    assert [mark for mark in MARKUP if mark in shown] == []


def test_through_a_pipe_no_status_line_is_drawn(bot):
    script_two_tools(bot.provider)
    done = bot.run("write a note")
    assert "\r" not in done.stderr and "\x1b" not in done.stderr


def test_provenance_is_a_short_aligned_summary(bot):
    script_two_tools(bot.provider)
    done = bot.run("write a note")
    summary = done.stdout.split(ANSWER, 1)[1].strip("\n").splitlines()
    names = [line.split()[0] for line in summary]
    assert names == ["agent", "time", "spend", "files", "record", "sandbox", "run"]
    assert len({line.index(line.split()[1]) for line in summary}) == 1  # values start in one column
    assert summary[3].endswith("1 file changed: notes.md")


def test_on_a_terminal_a_status_line_with_elapsed_time_is_redrawn_in_place(bot):
    bot.provider.script(say(ANSWER))
    code, shown = bot.on_terminal("run", "say it", "--agent", "codex", "--repo", str(bot.repo))
    assert code == 0, shown
    assert STATUS_LINE.search(shown)
    assert visible(shown).count(ANSWER) == 1 and "<details>" not in shown


def test_on_a_terminal_plain_draws_no_status_line(bot):
    bot.provider.script(say(ANSWER))
    code, shown = bot.on_terminal("run", "say it", "--agent", "codex", "--repo", str(bot.repo), "--plain")
    assert code == 0, shown
    assert not STATUS_LINE.search(shown) and ANSWER in shown


def test_agent_text_cannot_send_escape_sequences_to_the_terminal(bot):
    bot.provider.script(say("fine\x1b]0;pwned\x07\x1b[2J done"))
    done = bot.run("say it")
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "fine]0;pwned[2J done" in done.stdout


SCHEMA = {
    "type": "object",
    "required": ["status", "agent", "answer", "elapsed_s", "steps", "tools", "provenance"],
    "additionalProperties": False,
    "properties": {
        "status": {"enum": ["done", "failed", "cancelled"]},
        "agent": {"type": "string"},
        "answer": {"type": "string"},
        "elapsed_s": {"type": "number", "minimum": 0},
        "steps": {"type": "array", "items": {"type": "string"}},
        "tools": {"type": "array", "items": {
            "type": "object", "required": ["tool", "detail", "ok", "error"], "additionalProperties": False,
            "properties": {"tool": {"type": "string"}, "detail": {"type": "string"},
                           "ok": {"type": ["boolean", "null"]}, "error": {"type": ["string", "null"]}}}},
        "provenance": {"type": "object", "required": ["run_id", "agent", "session", "duration_s", "tokens",
                                                      "files_changed", "tiers", "sandbox_tier"],
                       "properties": {"run_id": {"type": "string"}, "tokens": {"type": ["integer", "null"]},
                                      "files_changed": {"type": "array", "items": {"type": "string"}},
                                      "tiers": {"type": "object"}}},
    },
}


def test_json_is_one_object_matching_the_schema(bot):
    script_two_tools(bot.provider)
    done = bot.run("write a note", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    jsonschema.validate(result, SCHEMA)
    assert (result["status"], result["answer"]) == ("done", ANSWER)
    assert [(t["tool"], t["ok"]) for t in result["tools"]] == [("read_file", True), ("save_file", True)]


def test_ctrl_c_stops_the_run_leaves_the_screen_clean_and_keeps_the_session(bot):
    from tests.cli.test_bad_input import sessions
    bot.provider.script(say("first"))
    assert bot.run("hello").returncode == 0
    before = sessions(bot)
    bot.provider.script(call("run", {"command": "sleep 120"}), say("never"))
    code, shown = bot.on_terminal("run", "wait", "--agent", "codex", "--repo", str(bot.repo),
                                  interrupt_at="sleep 120")
    assert code == 130, shown
    assert visible(shown).rstrip().splitlines()[-1] == "bot run: stopped; the repository's session is kept for the next run"
    assert "Traceback" not in shown and sessions(bot) == before, shown


def test_an_agents_progress_checklist_shows_each_line_once(bot):
    bot.provider.script(call("report_progress", {"markdown": "- [x] read the code\n- [ ] write the note"}),
                        call("report_progress", {"markdown": "- [x] read the code\n- [x] write the note"}),
                        say(ANSWER))
    done = bot.run("write a note")
    steps = [line for line in done.stderr.splitlines() if line.startswith("· ") and ("note" in line or "code" in line)]
    assert steps == ["· ✓ read the code", "· ○ write the note", "· ✓ write the note"]
