"""`bot runs list` and `bot runs show`: aligned, readable, with the request and the answer, and
`--json` made of real JSON values."""
from __future__ import annotations

import json

import pytest

from tests.fakes.provider import say

pytestmark = pytest.mark.e2e
REQUEST = "explain the hello module in a few words please"
ANSWER = "It prints hello. " + "And that is all it does, really. " * 8


@pytest.fixture
def recorded(bot):
    bot.provider.script(say(ANSWER.strip()))
    done = bot.run(REQUEST)
    assert done.returncode == 0, done.stderr
    return bot


def test_list_has_aligned_columns_with_time_tokens_cost_and_request(recorded):
    out = recorded("runs", "list", env={"COLUMNS": "200"}).stdout.splitlines()
    header, row = out[0], out[1]
    assert header.split() == ["RUN", "STARTED", "AGENT", "STATUS", "TIME", "TOKENS", "COST", "REQUEST"]
    assert row.index("codex") == header.index("AGENT") and row.index(REQUEST) == header.index("REQUEST")
    assert row.split()[5].endswith("s") and row.split()[6].replace(",", "").isdigit()  # STARTED is 2 words


def test_show_reads_as_text_with_the_request_and_the_answer(recorded):
    run_id = recorded("runs", "list", "--json").stdout
    run_id = json.loads(run_id)[0]["id"]
    out = recorded("runs", "show", run_id[:8], env={"COLUMNS": "80"}).stdout
    assert "request\n  " + REQUEST in out and "answer\n  It prints hello." in out
    assert "None" not in out and "resumed 0" not in out and '{"' not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_json_holds_values_not_json_strings(recorded):
    runs = json.loads(recorded("runs", "list", "--json").stdout)
    run = runs[0]
    assert isinstance(run["limits"], dict) and isinstance(run["egress"], dict)
    assert run["job_id"] is None and run["resumed"] is False and isinstance(run["tokens"], int)
    assert run["request"] == REQUEST and run["answer"] == ANSWER.strip()
    shown = json.loads(recorded("runs", "show", run["id"], "--json").stdout)
    assert shown["run"]["id"] == run["id"] and isinstance(shown["run"]["summary"], dict)
    assert all(not isinstance(e["detail"], str) or not e["detail"].startswith("{") for e in shown["events"])


def test_without_a_data_dir_nothing_is_listed_and_nothing_is_created(bot):
    xdg = bot.tmp / "xdg"
    done = bot("runs", "list", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(xdg)})
    assert done.returncode == 0 and "no runs recorded yet" in done.stdout
    assert not xdg.exists()


def test_in_the_services_folder_the_list_points_at_its_data_dir(bot):
    (bot.tmp / "svc" / ".bot-data").mkdir(parents=True)
    (bot.tmp / "svc" / ".bot-data" / "bot.db").write_bytes(b"")
    done = bot("runs", "list", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(bot.tmp / "xdg")}, cwd=bot.tmp / "svc")
    assert "BOT_DATA_DIR=.bot-data bot runs list" in done.stdout
