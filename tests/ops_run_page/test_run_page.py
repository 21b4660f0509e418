"""The run page: who may open it, and what the record of a finished run shows."""
from __future__ import annotations

import json

from bot.record import provenance
from bot.record.recorder import Recorder
from tests.entry_settings import current, database
from tests.ops_run_page.conftest import REPO, SECRET, mirror_with_commit, record_run
from tests.settings.conftest import sign_in


def _sign_in_configured(monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_CLIENT_ID", "Iv1.client")
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", "client-secret")


def test_the_tracking_link_is_the_short_run_path_under_the_public_url(monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.com/")
    _sign_in_configured(monkeypatch)
    assert current().run_url("ab12cd34") == "https://bot.example.com/runs/ab12cd34"


def test_without_sign_in_there_is_no_link_to_a_page_no_one_could_open(monkeypatch):
    """The run page asks its reader to sign in with GitHub; without GITHUB_CLIENT_ID and
    GITHUB_CLIENT_SECRET it could only answer 401, and its sign-in link 503."""
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.com/")
    monkeypatch.delenv("GITHUB_CLIENT_ID", raising=False)
    monkeypatch.delenv("GITHUB_CLIENT_SECRET", raising=False)
    assert current().run_url("ab12cd34") is None


def test_without_a_public_url_there_is_no_link(monkeypatch):
    monkeypatch.delenv("BOT_PUBLIC_URL", raising=False)
    assert current().run_url("ab12cd34") is None


def test_the_short_link_leads_to_the_page_where_the_sign_in_applies(client):
    run_id = record_run()
    response = client.get(f"/runs/{run_id}")
    assert response.status_code == 302 and response.headers["location"] == f"/settings/runs/{run_id}"


def test_someone_not_signed_in_is_asked_to_sign_in(client):
    run_id = record_run()
    response = client.get(f"/settings/runs/{run_id}")
    assert response.status_code == 401 and "/settings/login" in response.text
    assert client.get(f"/settings/runs/{run_id}/events").status_code == 401


def test_a_user_who_cannot_read_the_private_repository_is_refused(client, github):
    run_id = record_run()
    sign_in(client, github, "mallory")
    page = client.get(f"/settings/runs/{run_id}")
    assert page.status_code == 403 and "sess-4242" not in page.text and "hello.py" not in page.text
    assert client.get(f"/settings/runs/{run_id}/events").status_code == 403


def test_anyone_signed_in_may_read_a_public_repositorys_run(client, github):
    github.private[REPO] = False
    run_id = record_run()
    sign_in(client, github, "mallory")
    assert client.get(f"/settings/runs/{run_id}").status_code == 200


def test_an_id_prefix_opens_nothing(client, github):
    run_id = record_run()
    sign_in(client, github, "octocat")
    assert client.get(f"/settings/runs/{run_id[:12]}").status_code == 404


def test_a_local_run_has_no_page(client, github):
    run_id = record_run(conversation="local:/home/me/repo")
    sign_in(client, github, "octocat")
    assert client.get(f"/settings/runs/{run_id}").status_code == 404


def test_a_finished_run_shows_the_whole_record(client, github, tmp_path):
    base, commit = mirror_with_commit(tmp_path)
    run_id = record_run(base=base, status=None)
    recorder = Recorder(database())
    recorder.record(run_id, "enforced", "commit", outcome="pushed", raw=commit)
    recorder.finish_run(run_id, "ok")
    sign_in(client, github, "octocat")
    page = client.get(f"/settings/runs/{run_id}")
    assert page.status_code == 200
    text = page.text
    for shown in ("codex 0.171.0", "sess-4242", "1500 tokens, $0.0123", "api.openai.com",
                  "codex&#x27;s context compaction", "read_file", "+print(&#x27;hello, world&#x27;)"):
        assert shown in text, shown
    assert "script-src 'none'" in page.headers["content-security-policy"]


def test_nothing_secret_is_on_the_page(client, github):
    run_id = record_run()
    sign_in(client, github, "octocat")
    page = client.get(f"/settings/runs/{run_id}").text
    assert "I read hello.py" in page and SECRET not in page


def test_text_the_agent_wrote_is_shown_not_rendered(client, github):
    run_id = record_run(status=None)
    Recorder(database()).record(run_id, "attested", "text", raw='{"text":"<script>alert(1)</script><img src=x>"}')
    Recorder(database()).finish_run(run_id, "ok")
    sign_in(client, github, "octocat")
    page = client.get(f"/settings/runs/{run_id}").text
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_answers_provenance_links_the_run_page(monkeypatch):
    """The answer replaces the tracking comment's header: its provenance keeps the link."""
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.com")
    _sign_in_configured(monkeypatch)
    run_id = record_run()
    footer = provenance.build(Recorder(database()), run_id, agent="codex", run_page=current().run_url(run_id)).footer_line()
    assert f"[run {run_id[:8]}…](https://bot.example.com/runs/{run_id})" in footer


def test_a_local_runs_provenance_has_no_link(monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.com")
    _sign_in_configured(monkeypatch)
    run_id = record_run(conversation="local:/home/me/repo")
    prov = provenance.build(Recorder(database()), run_id, agent="codex", run_page=current().run_url(run_id))
    assert "](https://" not in prov.footer_line()


def test_github_failing_is_said_as_such_not_as_a_refusal(client, github):
    run_id = record_run()
    sign_in(client, github, "octocat")
    github.failures[f"/repos/{REPO}"] = 502
    page = client.get(f"/settings/runs/{run_id}")
    assert page.status_code == 502 and "GitHub unreachable" in page.text and "sess-4242" not in page.text


def _served_job(repo_id: int) -> str:
    """The job a service run served, as the intake stores it: the repository's id in its spec."""
    recorder = Recorder(database(), secrets=[])
    spec = json.dumps({"repo": REPO, "repo_id": repo_id, "author": "octocat"})
    job = recorder.db.query("INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) "
                            "VALUES (?, 'episode', ?, ?, 0) RETURNING id", ["d-1", f"{REPO}#12", spec])
    return str(job[0]["id"])


def test_a_repository_created_again_under_the_runs_repository_name_opens_nothing(client, github):
    """Access follows the repository's id: a reader of the new octo/app cannot open the old one's runs."""
    run_id = record_run()
    Recorder(database()).update_run(run_id, job_id=_served_job(repo_id=github.repo_ids[REPO] + 1))
    sign_in(client, github, "octocat")
    assert client.get(f"/settings/runs/{run_id}").status_code == 403


def test_the_runs_own_repository_opens_its_page(client, github):
    run_id = record_run()
    Recorder(database()).update_run(run_id, job_id=_served_job(repo_id=github.repo_ids[REPO]))
    sign_in(client, github, "octocat")
    page = client.get(f"/settings/runs/{run_id}")
    assert page.status_code == 200 and "@octocat" in page.text
