"""The provenance footer links the run page its builder is handed (the job's BOT_PUBLIC_URL), never
one read from the environment; a local run's record has no page to link."""
from __future__ import annotations

from bot.record import provenance
from bot.record.recorder import Recorder

PAGE = "https://bot.example.com/runs/"


def _run(tmp_path, conversation: str) -> tuple[Recorder, str]:
    recorder = Recorder(tmp_path / "bot.db")
    return recorder, recorder.start_run(agent="codex", conversation=conversation)


def test_the_footer_links_the_run_page_it_is_handed(tmp_path, monkeypatch):
    monkeypatch.delenv("BOT_PUBLIC_URL", raising=False)
    recorder, run_id = _run(tmp_path, "octo/repo#1")
    footer = provenance.build(recorder, run_id, run_page=PAGE + run_id).footer_line()
    assert f"[run {run_id[:8]}…]({PAGE}{run_id})" in footer


def test_the_footer_links_no_run_page_when_none_is_handed_whatever_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://environment.example.com")
    recorder, run_id = _run(tmp_path, "octo/repo#1")
    assert "](" not in provenance.build(recorder, run_id).footer_line()


def test_a_local_runs_footer_links_no_run_page_even_when_handed_one(tmp_path):
    recorder, run_id = _run(tmp_path, "local:/home/me/repo")
    footer = provenance.build(recorder, run_id, run_page=PAGE + run_id).footer_line()
    assert "](" not in footer and f"run {run_id[:8]}…" in footer


def test_the_summary_block_is_one_line_that_links_the_run_page(tmp_path):
    recorder, run_id = _run(tmp_path, "octo/repo#1")
    block = provenance.build(recorder, run_id, run_page=PAGE + run_id).summary_block()
    assert "\n" not in block and "<details>" not in block and "| tier |" not in block
    assert block.endswith(f"[run {run_id[:8]}…]({PAGE}{run_id})</sub>")
