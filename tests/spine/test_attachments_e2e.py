"""End to end: a file attached to a pull request's thread reaches the agent. `bot serve` downloads
it into the conversation's attachments folder, the episode names that folder as a read folder, and
the real Codex CLI at its default model reads the file through the bridge's read_file by the path
the prompt lists; a read of /proc/self/environ in the same run is still refused."""
from __future__ import annotations

import json
import re

import pytest

from bot.github.thread import _stem
from bot.workspace.worktrees import conversation_slug
from tests.fakes.provider import FakeProvider, bridged, say
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
TRACE = b"Traceback (most recent call last):\n  attached-trace-marker-3307\n"


def test_agent_reads_an_attached_file_by_its_listed_path(tmp_path):
    """The prompt lists the downloaded file's path; a bridged read_file of that path returns its
    text to the model, and the record shows the read admitted."""
    gh = seeded_github()
    url = gh.add_attachment(TRACE, content_type="text/plain", name="trace.log")
    gh.add_comment(REPO, 2, f"CI log: [trace.log]({url})", user="Codertocat")
    listed = str(tmp_path / "data" / "attachments" / conversation_slug(f"{REPO}#2") / f"01-{_stem(url)}.log")
    data = payload("pull_request_review_comment.created", "@bot codex what failed?")
    gh.add_review_comment(REPO, 2, data["comment"]["body"], user="Codertocat", path="README.md", line=1,
                          comment_id=data["comment"]["id"], diff_hunk="@@ -1 +1 @@\n-# Hello-World\n+# Hello World")
    with FakeProvider() as provider:
        provider.script(bridged("read_file", {"path": listed}),
                        bridged("read_file", {"path": "/proc/self/environ"}), say("It was the trace."))
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, GITHUB_SERVER_URL=gh.url)
        service = Service(env, tmp_path / "serve.log").start()
        try:
            assert service.deliver(data, event="pull_request_review_comment").status_code == 202
            gh.wait_for(lambda: [c for c in gh.comments(REPO, 2) if MARKER.search(c["body"] or "")], timeout=120)
        finally:
            service.stop()
            gh.stop()
        first = json.dumps(provider.main_requests()[0].body)
        results = [r.tool_result or "" for r in provider.main_requests()][1:]
    assert listed in first
    assert "attached-trace-marker-3307" in results[0], results
    assert "refused:" in results[1] and "PATH=" not in results[1]
