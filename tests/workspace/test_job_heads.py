"""What a job starts from, read of its mirror in one git (bot/workspace/mirror_read.py): the same
commits and the same configuration the separate reads gave (`git rev-parse`, repo_config.load),
and a worktree at the conversation's path however a crashed job left it."""
from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.workspace import mirror_read, repo_config
from bot.workspace import pool as worktree_pool
from bot.workspace import worktrees as workspace
from bot.workspace.repo_config import CONFIG_MAX_BYTES, ConfigError
from tests.entry_settings import current

from .conftest import GIT_ENV, sh_git

YAML_SHAPES = st.sampled_from(["", "mode: native\n", "mode: strict\nclose_issue: false\n", "mode: [\n",
                               "- a\n- b\n", "limits:\n  memory: lots\n", "nonsense: 1\n",
                               "x missing\nmode: native\n", "open_pull_requests: true\n"])
CONTENTS = st.one_of(YAML_SHAPES.map(str.encode), st.text(max_size=300).map(str.encode),
                     st.binary(max_size=300))


def _bare_with(tmp_path: Path, entries: dict[str, tuple[str, bytes]]) -> tuple[Path, str]:
    """A bare repository whose main holds `entries` (path: (mode, bytes)); its commit."""
    bare = tmp_path / f"repo-{len(list(tmp_path.iterdir()))}.git"
    sh_git("init", "--quiet", "--bare", "-b", "main", str(bare))
    index = {**GIT_ENV, "GIT_INDEX_FILE": str(bare / "tmp-index")}
    for path, (mode, data) in {"README.md": ("100644", b"# r\n"), **entries}.items():
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, env=GIT_ENV, input=data,
                              capture_output=True, check=True).stdout.decode().strip()
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}"], cwd=bare,
                       env=index, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=bare, env=index, capture_output=True, check=True,
                          text=True).stdout.strip()
    commit = sh_git("commit-tree", tree, "-m", "c", cwd=bare)
    sh_git("update-ref", "refs/heads/main", commit, cwd=bare)
    return bare, commit


def _config_or_refusal(read) -> object:
    try:
        return read()
    except ConfigError:
        return ConfigError


def _separately(bare: Path) -> object:
    return _config_or_refusal(lambda: repo_config.load(bare, "main"))


def _in_one_git(bare: Path) -> object:
    return _config_or_refusal(lambda: asyncio.run(workspace._job_heads(bare, None, None)).config)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=CONTENTS, as_link=st.booleans())
def test_the_configuration_read_in_one_git_is_the_one_load_reads(tmp_path, contents, as_link):
    bare, _ = _bare_with(tmp_path, {".github/bot.yml": ("120000" if as_link else "100644", contents)})
    assert _in_one_git(bare) == _separately(bare)


def test_no_configuration_file_gives_the_defaults_of_that_commit(tmp_path):
    bare, commit = _bare_with(tmp_path, {})
    config = asyncio.run(workspace._job_heads(bare, None, None)).config
    assert config == repo_config.load(bare, "main") and config.source == f"defaults@{commit[:7]}"


def test_a_folder_named_like_the_configuration_file_is_refused(tmp_path):
    bare, _ = _bare_with(tmp_path, {".github/bot.yml/inner": ("100644", b"mode: native\n")})
    assert _in_one_git(bare) is ConfigError is _separately(bare)


def test_a_configuration_file_past_the_cap_is_refused_naming_the_cap(tmp_path):
    bare, _ = _bare_with(tmp_path, {".github/bot.yml": ("100644", b"# pad\n" * (CONFIG_MAX_BYTES // 6 + 1))})
    with pytest.raises(ConfigError, match=f"larger than {CONFIG_MAX_BYTES:,} bytes"):
        asyncio.run(workspace._job_heads(bare, None, None))


def test_the_job_commit_is_the_one_rev_parse_names(tmp_path):
    bare, commit = _bare_with(tmp_path, {"src/a.py": ("100644", b"a = 1\n")})
    sh_git("update-ref", "refs/pull/4/head", commit, cwd=bare)
    heads = asyncio.run(workspace._job_heads(bare, None, 4))
    assert (heads.sha, heads.ref, heads.branch) == (sh_git("rev-parse", "refs/pull/4/head^{commit}", cwd=bare),
                                                   "refs/pull/4/head", "main")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.binary(max_size=2000), max_bytes=st.integers(min_value=0, max_value=2500))
def test_a_file_is_read_whole_exactly_when_it_fits_whatever_it_holds(tmp_path, contents, max_bytes):
    bare, commit = _bare_with(tmp_path, {"f": ("100644", contents)})
    names = ["main^{commit}", "main:f", "main:absent"]
    answers = asyncio.run(mirror_read.ask(bare, names, "main:f", max_bytes))
    assert answers.contents == (contents if len(contents) <= max_bytes else None)
    assert answers.found["main^{commit}"] == mirror_read.Found(commit, "commit", answers.found["main^{commit}"].size)
    assert answers.found["main:f"].size == len(contents) and answers.found["main:absent"] is None


def test_a_name_that_would_be_a_second_command_is_refused(tmp_path):
    bare, _ = _bare_with(tmp_path, {})
    with pytest.raises(ValueError):
        asyncio.run(mirror_read.ask(bare, ["main\ncontents main:README.md"]))


async def test_a_crashed_jobs_record_without_its_folder_gives_way_to_a_spare(remote, widget):
    """The folder was deleted, the mirror's record of it not: the next job at that path still
    gets its worktree (the record is pruned first, or `worktree move` would refuse the path)."""
    others = [await workspace.prepare(widget, f"octo/widget#{n}", current()) for n in (2, 3)]
    for other in others:
        await workspace.remove(other)
    crashed = await workspace.prepare(widget, "octo/widget#1", current())
    shutil.rmtree(crashed.path)
    [spare] = worktree_pool.spares(crashed.mirror)
    parked = (spare / "README.md").stat().st_ino
    again = await workspace.prepare(widget, "octo/widget#1", current())
    assert (again.path / "README.md").stat().st_ino == parked  # the spare itself, not a new checkout
    assert sh_git("worktree", "list", cwd=again.mirror).count(str(again.path)) == 1


async def test_a_crashed_jobs_record_without_its_folder_gives_way_to_a_new_worktree(remote, widget, monkeypatch):
    monkeypatch.setenv("BOT_SPARE_WORKTREES", "0")
    crashed = await workspace.prepare(widget, "octo/widget#1", current())
    shutil.rmtree(crashed.path)
    again = await workspace.prepare(widget, "octo/widget#1", current())
    assert (again.path / "README.md").read_text() == "# widget\n"
    assert sh_git("worktree", "list", cwd=again.mirror).count(str(again.path)) == 1


async def test_a_new_worktrees_git_dir_is_the_one_git_reports(remote, widget, monkeypatch):
    monkeypatch.setenv("BOT_SPARE_WORKTREES", "0")
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    assert wt.git_dir == Path(sh_git("rev-parse", "--absolute-git-dir", cwd=wt.path))


async def test_a_pull_job_sees_the_default_branch_and_the_pull_head_as_they_are_now(remote, widget):
    """Branches and the pull request's head come in one fetch: both are the latest."""
    await workspace.prepare(widget, "octo/widget#1", current())
    remote.commit(widget, "main", {".github/bot.yml": "open_pull_requests: true\n"})
    head = remote.open_pull(widget, 5, "feature", {"src/app.py": "print('pr')\n"})
    wt = await workspace.prepare(widget, "octo/widget#5", current(), pull_number=5)
    assert wt.base_sha == head and wt.config.open_pull_requests
    assert (wt.path / "src/app.py").read_text() == "print('pr')\n"
