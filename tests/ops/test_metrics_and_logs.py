"""The episode histogram moves when a run is recorded; job ids of jobs running side by side never mix
in the log lines."""
from __future__ import annotations

import asyncio
import json
import logging

from bot import logs, metrics
from bot.db import connect
from bot.record.recorder import Recorder


def episodes(agent: str, outcome: str) -> float:
    return metrics.REGISTRY.get_sample_value("bot_episode_duration_seconds_count",
                                             {"agent": agent, "outcome": outcome}) or 0.0


def test_a_finished_run_is_one_more_episode_in_the_histogram(tmp_path):
    recorder = Recorder(connect(path=tmp_path / "bot.db"))
    before = episodes("codex", "ok")
    run_id = recorder.start_run(agent="codex", job_id="7", conversation="octo/repo#1")
    recorder.finish_run(run_id, "ok")
    assert episodes("codex", "ok") == before + 1


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.addFilter(logs.JobFilter())
        self.setFormatter(logs.JsonFormatter())
        self.lines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


async def test_jobs_running_side_by_side_log_their_own_ids():
    handler, log = Lines(), logging.getLogger("tests.ops.jobs")
    log.addHandler(handler)
    log.setLevel(logging.INFO)

    async def job(job_id: int, thread: str, run: str) -> None:
        with logs.job_context(job_id, thread):
            log.info("claimed")
            await asyncio.sleep(0.01)
            logs.bind_run(run)
            await asyncio.create_task(asyncio.sleep(0))  # a task started inside keeps the context
            log.info("answered")

    try:
        await asyncio.gather(job(1, "octo/a#1", "run-a"), job(2, "octo/b#2", "run-b"))
        log.info("outside any job")
    finally:
        log.removeHandler(handler)
    by_job = {(line.get("job"), line.get("thread"), line.get("run"), line["message"]) for line in handler.lines}
    assert by_job == {("1", "octo/a#1", None, "claimed"), ("1", "octo/a#1", "run-a", "answered"),
                      ("2", "octo/b#2", None, "claimed"), ("2", "octo/b#2", "run-b", "answered"),
                      (None, None, None, "outside any job")}


def bridge_calls(tool: str, outcome: str) -> float:
    return metrics.REGISTRY.get_sample_value("bot_bridge_calls_total", {"tool": tool, "outcome": outcome}) or 0.0


async def test_bridged_calls_are_counted_by_tool_and_outcome(tmp_path):
    """One allowed write, one refused, one call of a tool that does not exist (counted as unknown,
    so an agent cannot mint label values)."""
    from bot.bridge.admission import Admission
    from bot.bridge.server import BridgeServer
    from tests.bridge.conftest import call, git

    root = tmp_path / "worktree"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    recorder = Recorder(connect(path=tmp_path / "bot.db"))
    run_id = recorder.start_run(agent="codex", conversation="octo/repo#1")
    before = (bridge_calls("save_file", "ok"), bridge_calls("save_file", "refused:git_dir"),
              bridge_calls("unknown", "refused:unknown_tool"))
    async with BridgeServer(root, Admission(root), recorder, run_id, scratch_root=tmp_path / "scratch") as bridge:
        await call(bridge, "save_file", path="a.txt", content="a")
        await call(bridge, "save_file", path=".git/config", content="x")
        await bridge.call_tool("made_up_tool_name_1234", {})
    after = (bridge_calls("save_file", "ok"), bridge_calls("save_file", "refused:git_dir"),
             bridge_calls("unknown", "refused:unknown_tool"))
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1]
