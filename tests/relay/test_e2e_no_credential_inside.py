"""In relay mode no credential of any kind is inside the sandbox: a process started there with the
CLI's own environment and HOME files reads its environment, every /proc/<pid>/environ and cmdline
it can see, and every file of HOME, and finds the relay's token but no real key or token."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from bot.episode.model_channel import model_channel
from bot.record.recorder import Recorder
from bot.relay import chatgpt
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.bridge.test_e2e_clis import make_worktree
from tests.entry_settings import current
from tests.fakes.provider import FakeLogin

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

KEY = "sk-real-inside-scan-KEY-0123456789"
SCAN = ('cat /proc/self/environ; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; done; '
        'find "$HOME" -type f -exec cat {} +; true')
LOGIN = FakeLogin()
KINDS = {
    "claude api key": ("claude", adapters.Credentials(env={"ANTHROPIC_API_KEY": KEY}, source="requester")),
    "claude subscription token": ("claude", adapters.Credentials(env={"CLAUDE_CODE_OAUTH_TOKEN": KEY},
                                                                 source="repository")),
    "codex api key": ("codex", adapters.Credentials(env={"OPENAI_API_KEY": KEY}, source="installation")),
    "codex chatgpt login": ("codex", adapters.Credentials(files={chatgpt.AUTH_FILE: LOGIN.auth_json().encode()},
                                                          source="requester")),
    "opencode anthropic key": ("opencode", adapters.Credentials(env={"ANTHROPIC_API_KEY": KEY}, source="operator")),
    "opencode google key": ("opencode", adapters.Credentials(env={"GOOGLE_GENERATIVE_AI_API_KEY": KEY},
                                                             source="operator")),
    "gemini api key": ("gemini", adapters.Credentials(env={"GEMINI_API_KEY": KEY}, source="requester")),
}
SECRETS = (KEY, LOGIN.access_token, LOGIN.refresh_token, chatgpt.Login.parse(LOGIN.auth_json()).id_token)


async def _scan(agent: str, creds: adapters.Credentials, root: Path) -> tuple[str, str]:
    worktree = make_worktree(root)
    recorder = Recorder(root / "bot.db")
    run_id = recorder.start_run(agent=agent)
    ctx = SimpleNamespace(conversation="octo/repo#1", repo="octo/repo", requester_id=42, repo_id=0, installation_id=7,
                          secrets=[], settings=current())
    adapter = adapters.get(agent)
    config = SandboxConfig(workdir=worktree, home=root / "home", allowed_hosts=adapter.default_allowed_hosts,
                           limits=Limits(timeout_s=60), tmpdir=root / "home" / ".tmp")
    async with model_channel(agent, adapter, creds, ctx, recorder, run_id, config) as channel:
        assert channel.relay is not None
        episode = adapters.Episode(prompt="hi", workdir=config.mount_path, home=config.home,
                                   credentials=channel.credentials, base_url=channel.base_url)
        invocation = adapter.command(episode)
        for relative, content in invocation.files.items():
            (config.home / relative).parent.mkdir(parents=True, exist_ok=True)
            (config.home / relative).write_bytes(content)
        process = await Tier1Spawner(host=current().sandbox_host).start(config, ["sh", "-c", SCAN], invocation.env)
        seen = await process.stdout.read()
        await process.wait()
        return seen.decode(errors="replace"), channel.relay.token


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_credential_is_inside_the_sandbox_in_relay_mode(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    agent, creds = KINDS[kind]
    seen, token = asyncio.run(_scan(agent, creds, tmp_path))
    assert token in seen  # the scan reads what the CLI holds
    assert [secret for secret in SECRETS if secret in seen] == []
