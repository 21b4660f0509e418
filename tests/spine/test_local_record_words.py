"""`bot run`'s record line says in words what the bot checked, with the counts `bot runs show`
prints for the same run (both real commands, the real Codex CLI, the fake provider)."""
from __future__ import annotations

import re

import pytest

from tests.fakes.provider import call, say
from tests.spine.local_cli import local_cli

pytestmark = pytest.mark.e2e
IN_WORDS = re.compile(r"^  record\s+(\d+) actions? checked by the bot · (\d+) steps? the agent reported", re.M)
RUNS_SHOW = re.compile(r"^record\s+(\d+) enforced · (\d+) attested", re.M)


def test_bot_runs_record_line_counts_equal_bot_runs_show(tmp_path):
    with local_cli(tmp_path) as cli:
        cli.provider.script(call("save_file", {"path": "calc.py", "content": "X = 1\n"}), say("Wrote calc.py."))
        done = cli.run("write calc.py")
        assert done.returncode == 0, done.stderr
        run_id = re.search(r"bot runs show ([0-9a-f]{12})", done.stdout).group(1)
        shown = cli.bot("runs", "show", run_id)
    in_words, in_runs_show = IN_WORDS.search(done.stdout), RUNS_SHOW.search(shown.stdout)
    assert in_words and in_runs_show, (done.stdout, shown.stdout)
    assert in_words.groups() == in_runs_show.groups()
