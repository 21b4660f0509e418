"""The installation token reaches git only through its environment, and is never left behind."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.workspace import effects
from bot.workspace import worktrees as workspace
from bot.workspace.git import GitError
from tests.entry_settings import current

from .git_http import GitHttpServer
from .test_effects import ask


@pytest.fixture
def http_remote(remote, token, monkeypatch):
    """octo/widget served over smart HTTP that demands `x-access-token:<token>`."""
    with GitHttpServer(remote.root, token) as server:
        monkeypatch.setenv("BOT_GIT_BASE_URL", server.url)
        yield server


async def test_fetch_and_push_authenticate_with_the_token(widget, http_remote, api, token):
    """Over HTTP the mirror fetch and the push both carry the token (git asked our helper)."""
    wt = await workspace.prepare(widget, "octo/widget#1", current(), token=token)
    (wt.path / "src/app.py").write_text("print('hello')\n")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request"
    assert any("git-upload-pack" in r for r in http_remote.authorized)
    assert any("git-receive-pack" in r for r in http_remote.authorized)


async def test_fetch_without_token_is_refused(widget, http_remote):
    """Without the token the server answers 401 and git fails without prompting."""
    with pytest.raises(GitError):
        await workspace.prepare(widget, "octo/widget#1", current())
    assert http_remote.refused >= 1 and not http_remote.authorized


async def test_token_is_nowhere_after_a_job(remote, widget, http_remote, api, token, caplog, tmp_path):
    """After a whole job no file in the data dir, no git config and no log line holds the token."""
    caplog.set_level(logging.DEBUG)
    log_file = current().data_dir / "logs" / "bot.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file)
    logging.getLogger().addHandler(handler)
    try:
        wt = await workspace.prepare(widget, "octo/widget#1", current(), token=token)
        try:
            (wt.path / "src/app.py").write_text("print('hello')\n")
            out = await effects.apply(wt, ask(1), api, token)
            worktree_files = _files_holding(wt.path, token) + _files_holding(wt.git_dir, token)
        finally:
            await workspace.remove(wt)
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    assert out.kind == "pull_request" and log_file.stat().st_size > 0
    assert worktree_files == []
    assert _files_holding(current().data_dir, token) == []
    assert _files_holding(remote.root, token) == []
    assert all(token not in p.read_text() for p in (Path.home() / ".gitconfig",
                                                   Path.home() / ".git-credentials") if p.exists())
    assert token not in caplog.text and token not in out.message + out.summary()


def _files_holding(root, secret: str) -> list[str]:
    needle = secret.encode()
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def test_push_refused_by_server_is_reported_with_diff(remote, widget, http_remote, api, token):
    """A push the server's hook declines is not retried blindly: reported, with the diff."""
    hook = remote.path(widget) / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'branch is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    wt = await workspace.prepare(widget, "octo/widget#1", current(), token=token)
    (wt.path / "src/app.py").write_text("print('hello')\n")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "failed" and "+print('hello')" in out.diff
    assert "declined" in out.message and token not in out.message
