"""End to end through `bot serve`, a signed delivery, the real Codex CLI and the fake GitHub: the
tracking comment's checklist shows a tool call as the terminal does (`save_file calc.py`, never its
arguments), and the answer's summary says in words what the bot checked, with the counts that
`bot runs show` prints for the same run."""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.fakes.provider import FakeProvider, call, say
from tests.spine.helpers import payload
from tests.spine.service import REPO, ROOT, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
CONTENT = "def add(a, b):\n    return a + b  # FILE-CONTENT-MARK\n"
REQUEST = "@bot codex write calc.py"
IN_WORDS = re.compile(r"(\d+) actions? checked by the bot · (\d+) steps? the agent reported")
RUNS_SHOW = re.compile(r"^record\s+(\d+) enforced · (\d+) attested", re.M)


@dataclass
class Seen:
    bodies: list[str]  # every body the bot posted or edited on the thread, in order
    answer: str
    runs_show: str


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> Seen:
    tmp = tmp_path_factory.mktemp("tracking")
    gh = seeded_github()
    with FakeProvider() as provider:
        provider.script(call("save_file", {"path": "calc.py", "content": CONTENT}), say("Wrote calc.py."))
        env = service_env(tmp, gh, make_remote(tmp), provider.url, BOT_PROGRESS_INTERVAL="0")  # every step edited
        service = Service(env, tmp / "serve.log").start()
        try:
            gh.add_comment(REPO, 1, REQUEST, user="Codertocat", comment_id=1)
            data = payload("issue_comment.created", REQUEST)
            data["comment"]["id"] = 1
            assert service.deliver(data).status_code == 202
            gh.wait_for(lambda: any("<!-- bot:run" in (c["body"] or "") for c in gh.comments(REPO, 1)),
                        timeout=180)
        finally:
            service.stop()
            gh.stop()
    bodies = [c.body["body"] for c in gh.calls_to("POST", r"/issues/1/comments$")]
    bodies += [c.body["body"] for c in gh.calls_to("PATCH", r"/issues/comments/\d+$")]
    answer = next(b for b in bodies if "<!-- bot:run" in b)
    run_id = re.search(r'"run":"([0-9a-f]+)"', answer).group(1)
    shown = subprocess.run([sys.executable, "-m", "bot.cli", "runs", "show", run_id], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    return Seen(bodies, answer, shown.stdout)


def _summary(answer: str) -> str:
    return re.search(r"<summary>(.*?)</summary>", answer).group(1)


def test_the_checklist_shows_a_tool_call_as_the_terminal_does(seen):
    lines = {line for body in seen.bodies for line in body.splitlines()}
    assert {"- [ ] save_file calc.py", "- [x] save_file calc.py"} <= lines


def test_the_checklist_never_shows_a_tools_arguments(seen):
    assert [b for b in seen.bodies if "FILE-CONTENT-MARK" in b or '"content"' in b] == []


def test_the_answers_summary_says_what_the_bot_checked_in_words(seen):
    summary = _summary(seen.answer)
    assert IN_WORDS.search(summary), summary
    assert not re.search(r"enforced|attested|unobserved", summary)


def test_the_answers_summary_counts_equal_bot_runs_show(seen):
    in_words = IN_WORDS.search(_summary(seen.answer))
    in_runs_show = RUNS_SHOW.search(seen.runs_show)
    assert in_words and in_runs_show, seen.runs_show
    assert in_words.groups() == in_runs_show.groups()
