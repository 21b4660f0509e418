"""Each agent's review signal, in total and per week, agrees on the repository's settings page, in
the Prometheus metrics (every repository together, no repository label) and in the database."""
from __future__ import annotations

import re
import time

from prometheus_client.parser import text_string_to_metric_families

from bot import db as bot_db
from bot.review import memory, signal_series
from bot.review.memory import Posted
from bot.web.health import exposition
from tests.entry_settings import current
from tests.settings.conftest import sign_in

PAGE = "/settings/repos/octo/app"


def seed(db, repo: str, number: int, agent: str, usd: float, states: list[str]) -> None:
    run_id = f"{repo}#{number}:{agent}"
    db.execute("INSERT INTO runs (id, conversation, agent, status) VALUES (?, ?, ?, 'ok')",
               [run_id, f"{repo}#{number}", agent])
    db.execute("INSERT INTO run_events (run_id, seq, kind, outcome) VALUES (?, 1, 'review', 'ok')", [run_id])
    db.execute("INSERT INTO model_spend (run_id, tokens, usd) VALUES (?, 10, ?)", [run_id, usd])
    memory.remember(db, repo, number, [agent], "a" * 40, 1,
                    [Posted(agent, number * 100 + i, f"f{i}.py", 1, None, "RIGHT", "nit", "f", f"finding {i}")
                     for i in range(len(states))])
    found = sorted(memory.findings(db, repo, number), key=lambda f: f.comment_id or 0)
    for finding, state in zip([f for f in found if f.agent == agent], states, strict=True):
        if state != memory.OPEN:
            memory.mark(db, [finding.id], state, "", via="reply")


def table(page: str) -> dict[str, list[str]]:
    body = page[page.index('<table class="signal">'):]
    body = body[:body.index("</table>")]
    rows = re.findall(r"<tr><td[^>]*>(.*?)</tr>", body)
    return {cells[0]: cells[1:] for cells in (re.findall(r'data-label="[^"]+">([^<]*)', "<td data-label=\"Agent\">"
                                                          + row) for row in rows)}


def metric(name: str, families) -> dict[str, float]:
    return {s.labels["agent"]: s.value for f in families for s in f.samples if s.name == name}


def test_the_signal_page_and_the_metrics_agree_with_the_database(client, github):
    db = bot_db.connect(settings=current())
    seed(db, "octo/app", 1, "codex", 0.10, [memory.FIXED, memory.FIXED, memory.DECLINED, memory.OPEN])
    seed(db, "octo/app", 2, "codex", 0.30, [memory.OPEN])
    seed(db, "octo/app", 1, "claude", 0.05, [memory.DECLINED])
    seed(db, "octo/other", 1, "codex", 1.00, [memory.FIXED])
    db.execute("INSERT INTO review_reactions (repo, comment_id, login, content, agent, created_at) "
               "VALUES ('octo/app', 100, 'alice', '+1', 'codex', 0)")
    github.add_repo("octo/app", octocat="maintain")
    sign_in(client, github)
    rows = table(client.get(PAGE).text)
    assert rows["codex"] == ["2", "5", "2", "1", "2", "1 up, 0 down", "40%", "$0.20"]
    assert rows["claude"] == ["1", "1", "0", "1", "0", "0 up, 0 down", "0%", "$0.05"]
    families = list(text_string_to_metric_families(exposition(db).decode()))
    assert metric("bot_review_findings_posted", families) == {"codex": 6.0, "claude": 1.0}
    assert metric("bot_review_findings_fixed", families) == {"codex": 3.0, "claude": 0.0}
    assert metric("bot_review_reviews", families) == {"codex": 3.0, "claude": 1.0}
    assert metric("bot_review_cost_usd", families)["codex"] == 1.40
    labels = {key for f in families if f.name.startswith("bot_review_") for s in f.samples for key in s.labels}
    assert labels == {"agent", "week"}  # no repository label; the week is the bot's own date


def _codex_signal() -> None:
    seed(bot_db.connect(settings=current()), "octo/app", 1, "codex", 0.10, [memory.FIXED, memory.OPEN])


def test_a_writer_sees_the_review_signal_on_its_own_page(client, github):
    _codex_signal()
    github.add_repo("octo/app", octocat="write")
    sign_in(client, github)
    response = client.get(f"{PAGE}/signal")
    assert response.status_code == 200
    assert table(response.text)["codex"][:4] == ["1", "2", "1", "0"]


def test_the_writers_signal_page_shows_no_keys_and_no_learned_rule_forms(client, github):
    _codex_signal()
    github.add_repo("octo/app", octocat="write")
    sign_in(client, github)
    page = client.get(f"{PAGE}/signal").text
    assert "/learned" not in page and "/keys" not in page


def test_a_reader_is_refused_the_signal_page(client, github):
    _codex_signal()
    github.add_repo("octo/app", octocat="read")
    sign_in(client, github)
    response = client.get(f"{PAGE}/signal")
    assert response.status_code == 403 and '<table class="signal">' not in response.text


def test_the_maintainers_page_links_the_signal_page(client, github):
    github.add_repo("octo/app", octocat="maintain")
    sign_in(client, github)
    assert f'href="{PAGE}/signal"' in client.get(PAGE).text


def test_the_weekly_series_on_the_page_and_in_the_metrics_agree_with_the_database(client, github):
    db = bot_db.connect(settings=current())
    seed(db, "octo/app", 1, "codex", 0.10, [memory.FIXED, memory.DECLINED])
    seed(db, "octo/app", 2, "codex", 0.10, [memory.FIXED, memory.FIXED, memory.OPEN])
    seed(db, "octo/other", 3, "codex", 0.10, [memory.FIXED])
    week = signal_series.WEEK_S
    db.execute("UPDATE review_findings SET created_at = ? WHERE number = 1", [time.time() - week])
    github.add_repo("octo/app", octocat="write")
    sign_in(client, github)
    page = client.get(f"{PAGE}/signal").text
    [weeks] = signal_series.weekly(db, "octo/app", time.time()).values()
    last, before = weeks[-1], weeks[-2]
    assert f"Week of {last.label}: 3 posted, 2 fixed, 0 declined, 1 open; 67% acted on" in page
    assert f"Week of {before.label}: 2 posted, 1 fixed, 1 declined, 0 open; 50% acted on" in page
    assert f"codex: share acted on 50% in the week of {before.label}, 67% in the week of {last.label}" in page
    families = list(text_string_to_metric_families(exposition(db).decode()))
    posted = {s.labels["week"]: s.value for f in families for s in f.samples
              if s.name == "bot_review_week_findings_posted" and s.labels["agent"] == "codex"}
    assert (posted[before.label], posted[last.label]) == (2.0, 4.0)  # every repository together
    assert len(posted) == signal_series.MAX_WEEKS
