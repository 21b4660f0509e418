"""The workspace's git reads of what a repository controls stop at a cap and fail visibly: the
configuration file, listings of an agent's tree, any git output."""
from __future__ import annotations

import asyncio

import pytest

from bot.workspace import effects
from bot.workspace import git as git_module
from bot.workspace.git import GitError, git, run_git
from bot.workspace.repo_config import CONFIG_MAX_BYTES, ConfigError, load
from tests.workspace.conftest import sh_git
from tests.workspace.test_effects import ask, edit


def _repo_with_config(tmp_path, text: str):
    sh_git("init", "-q", str(tmp_path))
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "bot.yml").write_text(text)
    sh_git("add", ".", cwd=tmp_path)
    sh_git("commit", "-qm", "config", cwd=tmp_path)
    return tmp_path / ".git"


def test_a_configuration_file_past_the_cap_is_refused_naming_its_size(tmp_path):
    mirror = _repo_with_config(tmp_path, "# padding\n" * (CONFIG_MAX_BYTES // 10 + 1) + "mode: native\n")
    with pytest.raises(ConfigError) as refused:
        load(mirror)
    assert f"larger than {CONFIG_MAX_BYTES:,} bytes" in str(refused.value)


def test_a_configuration_file_within_the_cap_is_read(tmp_path):
    mirror = _repo_with_config(tmp_path, "mode: native\n")
    assert load(mirror).mode == "native"


def test_git_output_past_the_cap_fails_saying_so(tmp_path, monkeypatch):
    monkeypatch.setattr(git_module, "OUTPUT_CAP", 1000)
    mirror = _repo_with_config(tmp_path, "x: 1\n" * 1000)
    with pytest.raises(GitError) as failed:
        asyncio.run(git("show", "HEAD:.github/bot.yml", cwd=mirror))
    assert "printed more than 1000 bytes and was stopped there" in str(failed.value)


def test_git_output_within_the_cap_is_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(git_module, "OUTPUT_CAP", 1000)
    mirror = _repo_with_config(tmp_path, "x: 1\n" * 100)
    assert asyncio.run(run_git("show", "HEAD:.github/bot.yml", cwd=mirror)) == (0, "x: 1\n" * 100, "")


async def test_an_agent_tree_whose_listing_passes_the_cap_is_never_committed(remote, widget, api, token,
                                                                          monkeypatch):
    """git's listing of what the agent changed is read up to the cap; past it the effect fails
    naming the cap instead of committing from a partial listing."""
    wt = await edit(widget, 1, {f"generated/file_{n:04}.txt": "x\n" for n in range(300)}, token)
    monkeypatch.setattr(git_module, "OUTPUT_CAP", 2000)
    with pytest.raises(GitError, match="printed more than 2000 bytes and was stopped there"):
        await effects.apply(wt, ask(1), api, token)
    assert not remote.exists(widget, "refs/heads/bot/codex/1-greeting-is-wrong")
