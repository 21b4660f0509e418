"""The bot's commits, pushes and pull requests (bot/effects.py), real git + the fake GitHub."""
from __future__ import annotations

from bot.workspace import effects
from bot.workspace import worktrees as workspace
from bot.workspace.effects import Request
from bot.workspace.repo_config import RepoConfig
from tests.entry_settings import current

from .conftest import sh_git


def ask(number: int, text: str = "fix the greeting", title: str = "Greeting is wrong",
        pull: dict | None = None) -> Request:
    return Request(agent="codex", text=text, requester_login="alice", requester_id=4242,
                   number=number, title=title, pull=pull)


async def edit(widget: str, number: int, files: dict[str, str], token: str | None = None,
               pull_number: int | None = None) -> workspace.Worktree:
    """A job's worktree with `files` written into it, as the agent would leave it."""
    wt = await workspace.prepare(widget, f"{widget}#{number}", current(), token=token, pull_number=pull_number)
    for name, content in files.items():
        (wt.path / name).parent.mkdir(parents=True, exist_ok=True)
        (wt.path / name).write_text(content)
    return wt


async def test_issue_change_becomes_branch_and_pull_request(remote, widget, github, api, token):
    """From an issue: a bot/<agent>/<n>-<slug> branch is pushed and a PR linking the issue opened."""
    wt = await edit(widget, 1, {"src/app.py": "print('hello')\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert (out.kind, out.branch) == ("pull_request", "bot/codex/1-greeting-is-wrong")
    assert remote.show(widget, out.branch, "src/app.py") == "print('hello')"
    pr = github.pulls(widget)[-1]
    assert (pr["number"], pr["head"]["ref"], pr["base"]["ref"]) == (out.pr_number, out.branch, "main")
    assert "Fixes #1" in pr["body"]


async def test_commit_is_by_bot_and_co_authored_by_requester(remote, widget, github, api, token,
                                                             monkeypatch):
    """The bot commits under BOT_GIT_NAME/EMAIL; the requester is a Co-authored-by trailer."""
    monkeypatch.setenv("BOT_GIT_NAME", "widgetbot")
    monkeypatch.setenv("BOT_GIT_EMAIL", "widgetbot@example.com")
    wt = await edit(widget, 1, {"src/app.py": "print('hello')\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    log = sh_git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%s|%B", out.commit_sha, cwd=remote.path(widget))
    author, committer, subject, body = log.split("|", 3)
    assert author == committer == "widgetbot <widgetbot@example.com>"
    assert subject == "Fix the greeting: Greeting is wrong"
    assert "Co-authored-by: alice <4242+alice@users.noreply.github.com>" in body


async def test_same_repo_pull_gets_commit_on_its_head(remote, widget, github, api, token):
    """From a same-repository PR: the commit lands on the PR's head branch, no new PR."""
    head = remote.open_pull(widget, 5, "feature", {"feature.txt": "f\n"})
    github.add_pull(widget, 5, head_ref="feature", head_sha=head)
    wt = await edit(widget, 5, {"feature.txt": "better\n"}, token, pull_number=5)
    out = await effects.apply(wt, ask(5, pull=await api.getitem(f"/repos/{widget}/pulls/5")), api, token)
    assert (out.kind, out.repo, out.branch) == ("pushed", widget, "feature")
    assert remote.rev(widget, "refs/heads/feature") == out.commit_sha
    assert sh_git("rev-parse", f"{out.commit_sha}^", cwd=remote.path(widget)) == head
    assert not github.calls_to("POST", r"/pulls$")


async def test_same_repo_pull_opens_pull_against_head_when_configured(remote, widget, github, api,
                                                                     token):
    """With open_pull_requests: true the bot opens a PR whose base is the PR's head branch."""
    remote.commit(widget, "main", {".github/bot.yml": "open_pull_requests: true\n"})
    head = remote.open_pull(widget, 6, "feature", {"feature.txt": "f\n"})
    github.add_pull(widget, 6, head_ref="feature", head_sha=head)
    wt = await edit(widget, 6, {"feature.txt": "better\n"}, token, pull_number=6)
    out = await effects.apply(wt, ask(6, pull=await api.getitem(f"/repos/{widget}/pulls/6")), api, token)
    assert out.kind == "pull_request" and out.branch.startswith("bot/codex/pr6-")
    assert github.pulls(widget)[-1]["base"]["ref"] == "feature"
    assert remote.rev(widget, "refs/heads/feature") == head


async def test_fork_pull_pushes_to_fork_when_allowed_twice(remote, widget, github, api, token):
    """A fork PR whose author allows maintainer edits, in a repo that allows it: push to the fork."""
    remote.commit(widget, "main", {".github/bot.yml": "allow_fork_push: true\n"})
    head = remote.open_pull(widget, 7, "patch-1", {"a.txt": "a\n"}, head_repo="alice/widget")
    github.add_pull(widget, 7, head_ref="patch-1", head_sha=head, head_repo="alice/widget",
                    maintainer_can_modify=True)
    wt = await edit(widget, 7, {"a.txt": "fixed\n"}, token, pull_number=7)
    out = await effects.apply(wt, ask(7, pull=await api.getitem(f"/repos/{widget}/pulls/7")), api, token)
    assert (out.kind, out.repo, out.branch) == ("pushed", "alice/widget", "patch-1")
    assert remote.show("alice/widget", "patch-1", "a.txt") == "fixed"


async def test_fork_pull_without_maintainer_edits_returns_diff(remote, widget, github, api, token):
    """A fork PR that does not allow maintainer edits gets the change as a diff; the fork is untouched."""
    remote.commit(widget, "main", {".github/bot.yml": "allow_fork_push: true\n"})
    head = remote.open_pull(widget, 8, "patch-2", {"a.txt": "a\n"}, head_repo="alice/widget")
    github.add_pull(widget, 8, head_ref="patch-2", head_sha=head, head_repo="alice/widget")
    wt = await edit(widget, 8, {"a.txt": "fixed\n"}, token, pull_number=8)
    out = await effects.apply(wt, ask(8, pull=await api.getitem(f"/repos/{widget}/pulls/8")), api, token)
    assert out.kind == "diff" and "+fixed" in out.diff and "did not allow edits" in out.message
    assert remote.rev("alice/widget", "refs/heads/patch-2") == head


async def test_fork_pull_returns_diff_when_repo_disallows_fork_push(remote, widget, github, api, token):
    """Maintainer edits allowed but allow_fork_push unset (the default): a diff, no push."""
    head = remote.open_pull(widget, 9, "patch-3", {"a.txt": "a\n"}, head_repo="alice/widget")
    github.add_pull(widget, 9, head_ref="patch-3", head_sha=head, head_repo="alice/widget",
                    maintainer_can_modify=True)
    wt = await edit(widget, 9, {"a.txt": "fixed\n"}, token, pull_number=9)
    out = await effects.apply(wt, ask(9, pull=await api.getitem(f"/repos/{widget}/pulls/9")), api, token)
    assert out.kind == "diff" and "allow_fork_push" in out.message
    assert remote.rev("alice/widget", "refs/heads/patch-3") == head


async def test_protected_path_is_refused_with_reason(remote, widget, github, api, token):
    """A change to .github/workflows is refused naming the file and the rule; nothing is pushed."""
    wt = await edit(widget, 1, {".github/workflows/ci.yml": "on: [push, pull_request]\n",
                                "src/app.py": "print('x')\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`.github/workflows/ci.yml`" in out.message
    assert ".github/workflows/**" in out.message and out.commit_sha is None
    assert not github.calls_to("POST", r"/pulls$")
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


async def test_empty_diff_creates_nothing(remote, widget, github, api, token):
    """An episode that changed nothing: no commit, no branch, no GitHub call."""
    wt = await edit(widget, 1, {}, token)
    calls_before = len(github.calls)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "none" and out.commit_sha is None
    assert len(github.calls) == calls_before
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


async def test_moved_branch_is_rebased_and_pushed(remote, widget, github, api, token):
    """The PR head moved during the episode: the bot fetches it, replays its commit, pushes."""
    head = remote.open_pull(widget, 5, "feature", {"feature.txt": "f\n"})
    github.add_pull(widget, 5, head_ref="feature", head_sha=head)
    wt = await edit(widget, 5, {"feature.txt": "better\n"}, token, pull_number=5)
    moved = remote.commit(widget, "feature", {"other.txt": "pushed meanwhile\n"})
    out = await effects.apply(wt, ask(5, pull=await api.getitem(f"/repos/{widget}/pulls/5")), api, token)
    assert out.kind == "pushed" and remote.rev(widget, "refs/heads/feature") == out.commit_sha
    assert sh_git("rev-parse", f"{out.commit_sha}^", cwd=remote.path(widget)) == moved
    assert remote.show(widget, "feature", "feature.txt") == "better"


async def test_moved_branch_with_conflict_is_reported_with_diff(remote, widget, github, api, token):
    """The PR head moved and touched the same line: reported as a conflict, the change as a diff."""
    head = remote.open_pull(widget, 5, "feature", {"feature.txt": "f\n"})
    github.add_pull(widget, 5, head_ref="feature", head_sha=head)
    wt = await edit(widget, 5, {"feature.txt": "mine\n"}, token, pull_number=5)
    moved = remote.commit(widget, "feature", {"feature.txt": "theirs\n"})
    out = await effects.apply(wt, ask(5, pull=await api.getitem(f"/repos/{widget}/pulls/5")), api, token)
    assert out.kind == "conflict" and "+mine" in out.diff and "moved" in out.message
    assert remote.rev(widget, "refs/heads/feature") == moved


async def test_second_turn_on_issue_adds_to_existing_branch_and_pull(remote, widget, github, api, token):
    """A follow-up on the same issue stacks on the bot's branch and reuses its open PR."""
    first = await effects.apply(await edit(widget, 1, {"one.txt": "1\n"}, token), ask(1), api, token)
    second = await effects.apply(await edit(widget, 1, {"two.txt": "2\n"}, token), ask(1), api, token)
    assert second.pr_number == first.pr_number and second.branch == first.branch
    assert remote.show(widget, first.branch, "one.txt") == "1"
    assert remote.show(widget, first.branch, "two.txt") == "2"
    assert len(github.pulls(widget)) == 1


async def test_concurrent_jobs_on_one_repository_both_land(remote, widget, github, api, token):
    """Two issues worked at once on one repository: two branches, two PRs, each with its change."""
    import asyncio

    one, two = await asyncio.gather(edit(widget, 1, {"one.txt": "1\n"}, token),
                                    edit(widget, 2, {"two.txt": "2\n"}, token))
    outs = await asyncio.gather(effects.apply(one, ask(1, title="one"), api, token),
                                effects.apply(two, ask(2, title="two"), api, token))
    assert [o.kind for o in outs] == ["pull_request", "pull_request"]
    assert remote.show(widget, outs[0].branch, "one.txt") == "1"
    assert not remote.exists(widget, f"{outs[0].branch}:two.txt")


def test_summary_names_base_commit_diffstat_and_pull():
    """The provenance line carries base → commit, the diffstat and the PR link."""
    out = effects.Outcome("pull_request", "", "3f2a9c1aaaa", "8c1e2d4bbbb", "1 file changed",
                          pr_number=13, pr_url="https://github.com/octo/widget/pull/13")
    assert out.summary() == ("base 3f2a9c1 → 8c1e2d4 · 1 file changed · "
                             "[PR #13](https://github.com/octo/widget/pull/13)")


async def test_pull_request_api_failure_keeps_pushed_branch(remote, widget, github, api, token):
    """If GitHub refuses to open the PR, the branch is still pushed and the answer says so."""
    github.fail_next("POST", r"/pulls$", status=403, body={"message": "Resource not accessible"})
    wt = await edit(widget, 1, {"src/app.py": "print('hello')\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pushed" and out.pr_number is None
    assert "could not open a pull request" in out.message
    assert remote.exists(widget, f"refs/heads/{out.branch}")


def test_summary_links_pushed_branch_on_web_host(monkeypatch):
    """A push to a branch is linked on the git host's web UI (github.com or GHES)."""
    monkeypatch.setenv("BOT_GIT_BASE_URL", "https://ghe.example.com")
    out = effects.Outcome("pushed", "", "3f2a9c1aaaa", "8c1e2d4bbbb", "1 file changed",
                          repo="octo/widget", branch="feature", git_base_url=current().git_base_url)
    assert out.summary().endswith("(https://ghe.example.com/octo/widget/tree/feature)")


async def test_nested_repository_is_refused(remote, widget, github, api, token):
    """A git repository the agent created inside the worktree is never committed as a gitlink."""
    wt = await edit(widget, 1, {"vendor/lib/x.txt": "x\n"}, token)
    sh_git("init", "--quiet", str(wt.path / "vendor/lib"))
    sh_git("add", "x.txt", cwd=wt.path / "vendor/lib")
    sh_git("commit", "--quiet", "-m", "inner", cwd=wt.path / "vendor/lib")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`vendor/lib`" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


def test_descriptive_request_is_the_title_as_is():
    """A request of several words is its own commit subject, without the thread title."""
    request = ask(1, text="rename the greeting helper and update callers")
    assert effects._title(request) == "Rename the greeting helper and update callers"


def test_co_author_without_user_id_uses_login_noreply(tmp_path):
    """When the requester's numeric id is unknown, the trailer uses login@users.noreply."""
    request = Request(agent="codex", text="fix it", requester_login="bob", requester_id=None, number=3)
    wt = workspace.Worktree(tmp_path, tmp_path, "octo/widget", "octo/widget#3", "refs/heads/main",
                            "0" * 40, "main", RepoConfig())
    assert "Co-authored-by: bob <bob@users.noreply.github.com>" in effects._commit_message(wt, request)


async def test_pull_cannot_unprotect_workflows_for_itself(remote, widget, github, api, token):
    """A PR whose bot.yml sets protected_paths: [] still gets its workflow edit refused."""
    head = remote.open_pull(widget, 11, "sneaky", {".github/bot.yml": "protected_paths: []\n"})
    github.add_pull(widget, 11, head_ref="sneaky", head_sha=head)
    wt = await edit(widget, 11, {".github/workflows/ci.yml": "on: pull_request_target\n"}, token,
                    pull_number=11)
    out = await effects.apply(wt, ask(11, pull=await api.getitem(f"/repos/{widget}/pulls/11")), api,
                              token)
    assert out.kind == "refused" and remote.rev(widget, "refs/heads/sneaky") == head
