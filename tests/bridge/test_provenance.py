"""The provenance block (bot/provenance.py), built from a real run record."""
from __future__ import annotations

import json

from adapters.base import Event, EventKind, Usage
from bot.record import provenance
from bot.record.defang import markers
from sandbox.base import EgressDecision


def record_episode(recorder, run_id) -> None:
    """A small episode: 3 bridged calls (1 refused), 4 CLI events, 1 gap, egress to one host."""
    recorder.update_run(run_id, limits={"memory_bytes": 2 << 30, "timeout_s": 300, "pids": 512})
    recorder.enforced(run_id, "save_file", {"path": "a.py"}, outcome="ok", duration_ms=1)
    recorder.enforced(run_id, "save_file", {"path": ".git/config"}, outcome="refused:git_dir", duration_ms=1)
    recorder.enforced(run_id, "run", {"command": "pytest"}, outcome="ok", duration_ms=900)
    for kind in (EventKind.SESSION, EventKind.TEXT, EventKind.TEXT, EventKind.DONE):
        recorder.attest(run_id, Event(kind=kind, raw=b"{}"))
    recorder.declare_gap(run_id, "codex's model calls")
    recorder.attach_egress(run_id, [EgressDecision("api.openai.com", 443, True, "allowlist")] * 2)


def test_tier_counts_equal_recorded_events(recorder, run_id):
    """The counts in the block are exactly the recorded events per tier."""
    record_episode(recorder, run_id)
    prov = provenance.build(recorder, run_id)
    counts = recorder.tier_counts(run_id)
    assert {tier: prov.tiers[tier]["count"] for tier in prov.tiers} == {
        "enforced": counts["enforced"], "attested": counts["attested"], "unobserved": counts["unobserved"]}
    assert "| enforced | 3 |" in prov.details_block() and "| attested | 4 |" in prov.details_block()


def test_enforced_row_names_tools_and_refusals(recorder, run_id):
    """The enforced row says which bridge tools ran and how many were refused."""
    record_episode(recorder, run_id)
    what = provenance.build(recorder, run_id).tiers["enforced"]["what"]
    assert what == "bridge: save_file ×2 (1 refused), run ×1"


def test_unobserved_row_names_gaps_and_proxy_logged_hosts(recorder, run_id):
    """Declared gaps and the provider traffic the proxy saw are named, never hidden."""
    record_episode(recorder, run_id)
    what = provenance.build(recorder, run_id).tiers["unobserved"]["what"]
    assert what == "codex's model calls; its traffic to api.openai.com (2 connections, proxy-logged)"


def test_summary_line_has_agent_session_duration_tokens_files_pr(recorder, run_id):
    """The <summary> reads as one line: agent, version, session, what was done."""
    prov = provenance.build(recorder, run_id, version="0.171.0", resumed=True, duration_s=42,
                            usage=Usage(input_tokens=12000, output_tokens=300),
                            files_changed=["a.py", "b.py", "c.py"],
                            pr_url="https://github.com/octo/repo/pull/13")
    assert prov.summary_line() == ("codex 0.171.0 · resumed session · 42 s · 12.3k tokens · "
                                   "3 files changed · PR #13")


def test_footer_has_tier_egress_limits_base_and_run(recorder, run_id):
    """The footer line names sandbox tier, egress hosts, limits, base commit and run id."""
    record_episode(recorder, run_id)
    footer = provenance.build(recorder, run_id).footer_line()
    assert footer == f"sandbox tier 1 · egress: api.openai.com · 2 GiB · 300 s · 512 pids · base 3f2a9c1 · run {run_id[:8]}…"


def test_fresh_session_says_why(recorder, run_id):
    """A session started fresh says so, with the reason."""
    prov = provenance.build(recorder, run_id, resumed=False, fresh_reason="the CLI no longer knew it")
    assert "new session (the CLI no longer knew it)" in prov.summary_line()


def test_native_mode_marks_changes_attested(recorder):
    """In native mode the changed files are the CLI's own edits: attested, and the block says so."""
    run_id = recorder.start_run(agent="claude", mode="native")
    prov = provenance.build(recorder, run_id, files_changed=["x.py"])
    assert "1 file changed (native mode, attested)" in prov.summary_line()


def test_marker_round_trips(recorder, run_id):
    """The hidden marker, one HTML comment outside code, carries conversation, backend, session and run."""
    prov = provenance.build(recorder, run_id, session_id="thread-1")
    body = prov.render("Fixed it.")
    [marker] = [m for m in markers(body) if m.startswith("<!-- bot:run ")]
    assert json.loads(marker.removeprefix("<!-- bot:run ").removesuffix(" -->")) == {
        "conversation": "octo/repo#12", "backend": "codex", "session": "thread-1", "run": run_id}


def test_render_puts_answer_first_then_collapsed_block(recorder, run_id):
    """The answer comes first, then a <details> block, then the marker on the last line."""
    body = provenance.build(recorder, run_id).render("Fixed it.\n")
    assert body.startswith("Fixed it.\n\n<details><summary>") and body.splitlines()[-1].startswith("<!-- bot:run ")


def test_secrets_never_appear_in_block(recorder, run_id):
    """A secret that reached a gap description is redacted from the block and the JSON."""
    recorder.declare_gap(run_id, "traffic with key sk-test-SECRET-value-123")
    prov = provenance.build(recorder, run_id)
    assert "sk-test-SECRET" not in prov.render("ok") + json.dumps(prov.as_dict())


def test_json_form_is_serialisable_with_the_same_counts(recorder, run_id):
    """as_dict() is plain JSON carrying the same tier counts as the block."""
    record_episode(recorder, run_id)
    data = json.loads(json.dumps(provenance.build(recorder, run_id).as_dict()))
    assert [data["tiers"][t]["count"] for t in ("enforced", "attested", "unobserved")] == [3, 4, 1]


def test_tiny_cost_is_shown_as_under_a_cent(recorder, run_id):
    """A reported cost below one cent is not rounded to a misleading $0.00."""
    prov = provenance.build(recorder, run_id, usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.0004))
    assert "<$0.01" in prov.summary_line() and "$0.00" not in prov.summary_line()
