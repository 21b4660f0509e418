"""One episode cannot stall the service: while a CLI floods its stdout at full speed (one endless
line, the shape that once froze the event loop), a real `bot serve` still acknowledges another
thread's webhook and posts its 👀."""
from __future__ import annotations

import pytest

from tests.ops.flood_cli import Flood
from tests.ops.soak import _comment_payload
from tests.spine.service import REPO, make_remote, seeded_github, service_env, serving

pytestmark = pytest.mark.e2e
FLOODING, QUIET = 101, 301  # the comments' ids: the flooding thread is issue 1, the other issue 3


def eyes_on(gh, comment_id: int) -> bool:
    return {"subject": "issue_comment", "comment_id": comment_id, "content": "eyes"} in gh.reactions


def test_another_threads_webhook_is_acknowledged_and_its_eyes_posted_while_one_episode_floods(tmp_path):
    gh = seeded_github()
    gh.add_issue(REPO, 3, title="Another thread", user="Codertocat")
    flood = Flood(tmp_path / "flood", kind="line")
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9",
                      BOT_CODEX_BIN=str(flood.cli), BOT_SANDBOX_TIER="0", BOT_WORKERS="2")
    with serving(gh, env, tmp_path / "serve.log") as service:
        flood.arm()
        gh.add_comment(REPO, 1, "@bot codex flood", user="Codertocat", comment_id=FLOODING)
        assert service.deliver(_comment_payload(1, FLOODING, "@bot codex flood")).status_code == 202
        flood.wait_flooding()  # 128 MiB of one line written: the service reads it as fast as it comes

        gh.add_comment(REPO, 3, "@bot codex hello", user="Codertocat", comment_id=QUIET)
        assert service.deliver(_comment_payload(3, QUIET, "@bot codex hello")).status_code == 202
        gh.wait_for(lambda: eyes_on(gh, QUIET), timeout=60)
        assert not flood.done(), "the flood ended before the other thread was acknowledged"

        flood.stop()
        flood.wait_done()
