"""`bot action` against recorded event payloads and a fake GitHub (no agent run here)."""
from __future__ import annotations

from bot.cli import main as cli
from tests.action.conftest import REPO, WORKFLOW_TOKEN, payload
from tests.entry_settings import current


def test_comment_without_mention_does_nothing(github, runner, capsys):
    """The recorded comment has no @bot line: no GitHub call, status ignored, exit 0."""
    runner.event("issue_comment", payload("issue_comment.created"))
    assert cli.main(["action"]) == 0
    assert github.calls == []
    assert runner.outputs()["status"] == "ignored"
    assert "nothing to do" in capsys.readouterr().out


def test_help_is_answered_in_the_thread(github, runner):
    """`@bot help` posts the help text on the issue with the workflow token."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    assert cli.main(["action"]) == 0
    [post] = github.calls_to("POST", rf"/repos/{REPO}/issues/1/comments$")
    assert post.headers["authorization"].endswith(WORKFLOW_TOKEN)
    assert "@bot" in post.body["body"]
    assert runner.outputs()["status"] == "replied"


def test_outputs_hold_a_multiline_answer(github, runner):
    """The answer output survives line breaks and carries the posted comment's id."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    cli.main(["action"])
    outputs = runner.outputs()
    [comment] = github.comments(REPO, 1)
    assert outputs["answer"] == comment["body"]
    assert "\n" in outputs["answer"]
    assert outputs["comment-id"] == str(comment["id"])


def test_step_summary_has_the_answer(github, runner):
    """The step summary shows the status and the answer."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    cli.main(["action"])
    assert runner.summary.read_text().startswith("### @bot: replied")


def test_unknown_agent_gets_the_agent_list(github, runner):
    """`@bot copilot …` is answered with the agents that exist, not silence."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot copilot fix the typo"))
    assert cli.main(["action"]) == 0
    [comment] = github.comments(REPO, 1)
    assert "`copilot`" in comment["body"] and "`claude`" in comment["body"]


def test_untrusted_author_is_told_once_and_nothing_runs(github, runner):
    """A run request from an author without repository association is refused in the thread."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot fix the typo",
                                          author_association="NONE"))
    assert cli.main(["action"]) == 0
    [comment] = github.comments(REPO, 1)
    assert comment["body"].startswith("Sorry, only people with")
    assert github.reactions == []
    assert runner.outputs()["status"] == "not_allowed"


def test_bot_author_is_ignored(github, runner):
    """Comments by bots (including github-actions[bot]) never trigger, so the bot cannot loop."""
    data = payload("issue_comment.created", "@bot help")
    data["comment"]["user"].update(login="github-actions[bot]", type="Bot")
    runner.event("issue_comment", data)
    assert cli.main(["action"]) == 0
    assert github.calls == []


def test_other_actions_of_the_event_are_ignored(github, runner):
    """A deleted comment is not a command, whatever its text."""
    runner.event("issue_comment", payload("issue_comment.deleted", "@bot help"))
    assert cli.main(["action"]) == 0
    assert github.calls == []


def test_review_comment_is_answered_in_its_review_thread(github, runner):
    """A command on a diff line is answered as a reply in that review thread."""
    data = payload("pull_request_review_comment.created", "@bot help")
    data["comment"]["id"] = github.add_review_comment(REPO, 2, "@bot help", user="Codertocat")["id"]
    runner.event("pull_request_review_comment", data)
    assert cli.main(["action"]) == 0
    replies = github.calls_to("POST", rf"/pulls/2/comments/{data['comment']['id']}/replies$")
    assert len(replies) == 1


def test_stop_explains_how_to_cancel_in_actions(github, runner):
    """`@bot stop` says how to stop a run in Actions mode instead of pretending."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot stop"))
    cli.main(["action"])
    [comment] = github.comments(REPO, 1)
    assert "Actions tab" in comment["body"]


def test_missing_event_file_is_a_clear_error(runner, monkeypatch, capsys):
    """Outside a workflow the step fails with an error annotation naming the variable."""
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    assert cli.main(["action"]) == 2
    assert capsys.readouterr().out.startswith("::error::GITHUB_EVENT_PATH")


def test_missing_token_is_a_clear_error(runner, monkeypatch, capsys):
    """Without a token the step fails and says which permissions to grant."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    monkeypatch.delenv("GITHUB_TOKEN")
    assert cli.main(["action"]) == 2
    assert "issues: write" in capsys.readouterr().out


def test_comment_text_is_not_echoed_to_the_log(github, runner, capsys):
    """Untrusted comment text never reaches the log, so it cannot inject workflow commands."""
    runner.event("issue_comment", payload("issue_comment.created", "@bot help\n::add-mask::x\n::error::pwned"))
    cli.main(["action"])
    assert "pwned" not in capsys.readouterr().out


def test_runner_temp_is_the_default_data_dir(github, runner, monkeypatch, tmp_path):
    """On a runner the data dir defaults to $RUNNER_TEMP/bot-data (what the Actions cache saves)."""
    monkeypatch.delenv("BOT_DATA_DIR")
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path / "temp"))
    runner.event("issue_comment", payload("issue_comment.created", "@bot status"))
    assert cli.main(["action"]) == 0
    assert (tmp_path / "temp" / "bot-data" / "bot.db").exists()


def test_credential_files_are_scrubbed_before_the_cache_is_saved(github, runner):
    """CLI credential files in the per-conversation homes are removed when the step ends."""
    home = current().data_dir / "homes" / "codertocat-hello-world-1-abcd1234" / "codex"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY":"sk-x"}')
    session = home / ".codex" / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02-abc.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("{}")
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    cli.main(["action"])
    assert not (home / ".codex" / "auth.json").exists()
    assert session.exists()


def test_command_in_a_new_issue_body_is_answered(github, runner):
    """`@bot help` in the body of a newly opened issue is answered on that issue."""
    runner.event("issues", payload("issues.opened", "Something is off.\n\n@bot help"))
    assert cli.main(["action"]) == 0
    [comment] = github.comments(REPO, 1)
    assert runner.outputs()["comment-id"] == str(comment["id"])


def test_github_refusing_the_reply_fails_the_step_visibly(github, runner, capsys):
    """When GitHub refuses the bot's comment, the step fails with an error annotation."""
    github.fail_next("POST", r"/issues/1/comments$", status=403, body={"message": "Resource not accessible by integration"})
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    assert cli.main(["action"]) == 1
    assert "::error::bot could not answer in the thread: BadRequest" in capsys.readouterr().out
    assert runner.outputs()["status"] == "failed"


def test_malformed_event_file_is_a_clear_error(runner, monkeypatch, capsys, tmp_path):
    """A truncated event file is reported as such, not as a Python traceback."""
    broken = tmp_path / "event.json"
    broken.write_text('{"action": "created", "comment": {')
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(broken))
    assert cli.main(["action"]) == 2
    assert "does not hold a webhook payload object" in capsys.readouterr().out


def test_a_permission_refusal_names_the_permissions_to_grant():
    """Only GitHub's permission refusal points at `issues: write`; a 422 says what GitHub said."""
    from gidgethub import BadRequest

    from bot.cli.action import could_not_answer
    assert "issues: write" in could_not_answer(BadRequest(403, "Resource not accessible"), "tok")
    assert "issues: write" not in could_not_answer(BadRequest(422, "Validation Failed"), "tok")
