"""`bot run` on every state a local folder can be in: one line that says what to do, or a run
that works and says which base it used."""
from __future__ import annotations

import subprocess

import pytest

from tests.cli.conftest import git
from tests.cli.test_bad_input import one_line_refusal
from tests.fakes.provider import say

pytestmark = pytest.mark.e2e
FIRST_COMMIT = "`git add -A && git commit -m \"first commit\"`"


def refusal_line(done) -> str:
    one_line_refusal(done)
    return next(line for line in done.stderr.splitlines() if line.startswith("bot run:"))


def run_in(bot, folder, *extra: str):
    return bot("run", "hi", "--agent", "codex", "--repo", str(folder), *extra)


def base_line(done) -> str:
    return next(line for line in done.stderr.splitlines() if line.startswith("· base: "))


def head(folder) -> str:
    return subprocess.run(["git", "-C", str(folder), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_a_folder_that_is_not_a_repository_is_told_how_to_make_one_with_a_commit(bot):
    folder = bot.tmp / "plain"
    folder.mkdir()
    assert refusal_line(run_in(bot, folder)) == (
        f"bot run: {folder} is not inside a git repository: make it one with `git init` and then {FIRST_COMMIT}, "
        "or pass --repo with a repository's folder")


def test_a_repository_without_a_commit_is_told_to_commit_first(bot):
    folder = bot.tmp / "empty"
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    (folder / "a.txt").write_text("a\n")
    assert refusal_line(run_in(bot, folder)) == (
        f"bot run: {folder} has no commit yet: the agent starts from a commit, so make the first one "
        f"there with {FIRST_COMMIT}")


def test_a_bare_repository_is_told_to_run_in_a_clone(bot):
    folder = bot.tmp / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bot.repo), str(folder)], check=True)
    assert refusal_line(run_in(bot, folder)) == (
        f"bot run: {folder} is a bare repository (it has no working tree for the agent): "
        f"clone it with `git clone {folder}` and run in the clone")


def test_a_detached_head_works_and_says_which_commit_it_started_from(bot):
    git(bot.repo, "checkout", "-q", "--detach", "HEAD")
    bot.provider.script(say("detached fine"))
    done = run_in(bot, bot.repo)
    assert done.returncode == 0, done.stderr
    assert base_line(done) == f"· base: detached HEAD at {head(bot.repo)}"


def test_a_linked_worktree_works_and_says_its_branch(bot):
    linked = bot.tmp / "linked"
    git(bot.repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    bot.provider.script(say("worktree fine"))
    done = run_in(bot, linked)
    assert done.returncode == 0, done.stderr
    assert base_line(done) == f"· base: branch feature at {head(linked)} (a linked worktree of {bot.repo})"


def test_a_submodule_works_in_the_submodule_and_says_so(bot):
    outer = bot.tmp / "outer"
    subprocess.run(["git", "init", "-q", "-b", "main", str(outer)], check=True)
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(bot.repo), "inner")
    git(outer, "commit", "-qm", "add the submodule")
    bot.provider.script(say("submodule fine"))
    git(outer / "inner", "checkout", "-q", "--detach")
    done = run_in(bot, outer / "inner" / "pkg")
    assert done.returncode == 0, done.stderr
    assert base_line(done) == (f"· base: detached HEAD at {head(outer / 'inner')} "
                               f"(the submodule inner of {outer})")
