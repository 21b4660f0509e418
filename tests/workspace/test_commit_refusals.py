"""What the bot refuses to commit from an agent-modified worktree: escaping symlinks, huge files, aliased protected folders."""
from __future__ import annotations

import os

from bot.workspace import effects
from bot.workspace.repo_config import RepoConfig

from .conftest import sh_git
from .test_effects import ask, edit


async def test_symlink_to_a_host_path_is_not_committed(remote, widget, github, api, token):
    """A symlink to an absolute host path (followed by any CI checkout) is refused, nothing pushed."""
    wt = await edit(widget, 1, {"src/app.py": "print('hi')\n"}, token)
    os.symlink("/home/runner/.credentials", wt.path / "docs-link")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`docs-link`" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


async def test_symlink_climbing_out_of_the_repository_is_not_committed(remote, widget, github, api, token):
    """A relative symlink whose target climbs above the repository root is refused."""
    wt = await edit(widget, 1, {}, token)
    (wt.path / "sub").mkdir()
    os.symlink("../../secrets", wt.path / "sub" / "link")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`sub/link`" in out.message


async def test_symlink_into_the_clones_git_dir_is_not_committed(remote, widget, github, api, token):
    """A symlink to `.git/config` (where a CI checkout keeps its token) is refused."""
    wt = await edit(widget, 1, {}, token)
    os.symlink(".git/config", wt.path / "config-link")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`config-link`" in out.message


async def test_symlink_inside_the_repository_is_still_committed(remote, widget, github, api, token):
    """A symlink to another file of the repository is an ordinary change and lands."""
    wt = await edit(widget, 1, {"docs/guide.md": "# guide\n"}, token)
    os.symlink("docs/guide.md", wt.path / "GUIDE.md")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request"


async def test_huge_file_is_refused_before_it_is_hashed(remote, widget, github, api, token):
    """A file above the size cap is refused before `git add` writes it into the shared mirror."""
    wt = await edit(widget, 1, {}, token)
    with open(wt.path / "blob.bin", "wb") as handle:
        handle.truncate(effects.MAX_FILE_BYTES + 1)  # sparse: no disk is spent on it
    objects_before = sh_git("count-objects", cwd=wt.mirror)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`blob.bin`" in out.message
    assert sh_git("count-objects", cwd=wt.mirror) == objects_before


async def test_symlinked_protected_folder_is_refused_as_protected(remote, widget, github, api, token):
    """A protected folder made a symlink to an unprotected one cannot smuggle files in."""
    wt = await edit(widget, 1, {"ci/evil.yml": "on: push\n"}, token)
    wt.config = RepoConfig(protected_paths=("deploy/workflows/**",))
    (wt.path / "deploy").mkdir()
    os.symlink("../ci", wt.path / "deploy" / "workflows")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`deploy/workflows`" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""
