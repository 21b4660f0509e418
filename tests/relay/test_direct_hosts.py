"""Direct mode (the key in the sandbox): the sandbox may reach the host of the provider whose key
the CLI holds, and no other provider's."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from adapters import base
from adapters.base import Credentials
from bot.config import Settings
from bot.episode.direct_hosts import direct_hosts
from bot.episode.model_channel import model_channel
from sandbox.base import SandboxConfig
from tests.entry_settings import current
from tests.relay.conftest import REAL_KEY

GOOGLE = "generativelanguage.googleapis.com"


def _ctx():
    return SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[], settings=current())


async def _hosts_in_direct_mode(tmp_path: Path, recorder, run_id, agent: str, creds: Credentials):
    adapter = base.get(agent)
    config = SandboxConfig(workdir=tmp_path, home=tmp_path / "home",
                           allowed_hosts=tuple(adapter.default_allowed_hosts) + ("pypi.org",))
    async with model_channel(agent, adapter, creds, _ctx(), recorder, run_id, config) as channel:
        assert channel.relay is None
    return config.allowed_hosts


def _logins(**providers) -> Credentials:
    return Credentials(env={"OPENCODE_AUTH_CONTENT": json.dumps(providers)})


async def test_opencode_with_google_and_xai_logins_reaches_those_providers_only(tmp_path, recorder, run_id):
    creds = _logins(google={"type": "api", "key": REAL_KEY}, xai={"type": "api", "key": REAL_KEY})
    hosts = await _hosts_in_direct_mode(tmp_path, recorder, run_id, "opencode", creds)
    assert set(hosts) == {GOOGLE, "api.x.ai", "pypi.org"}


async def test_opencode_reaches_only_the_operators_named_provider_of_its_logins(tmp_path, recorder, run_id,
                                                                             monkeypatch):
    monkeypatch.setenv("BOT_OPENCODE_PROVIDER", "google")
    creds = _logins(google={"type": "api", "key": REAL_KEY}, anthropic={"type": "oauth", "refresh": "r"})
    hosts = await _hosts_in_direct_mode(tmp_path, recorder, run_id, "opencode", creds)
    assert hosts == ("pypi.org", GOOGLE)


async def test_opencode_with_an_anthropic_oauth_login_reaches_no_openai_host(tmp_path, recorder, run_id):
    creds = _logins(anthropic={"type": "oauth", "refresh": "r", "access": "a"})
    hosts = await _hosts_in_direct_mode(tmp_path, recorder, run_id, "opencode", creds)
    assert hosts == ("api.anthropic.com", "pypi.org")


async def test_opencode_with_a_custom_providers_key_reaches_no_known_provider(tmp_path, recorder, run_id):
    hosts = await _hosts_in_direct_mode(tmp_path, recorder, run_id, "opencode",
                                        Credentials(env={"MY_LLM_KEY": REAL_KEY}))
    assert hosts == ("pypi.org",)


async def test_a_single_provider_cli_in_direct_mode_keeps_its_own_host(tmp_path, recorder, run_id):
    creds = Credentials(files={".codex/auth.json": b"{}"})
    hosts = await _hosts_in_direct_mode(tmp_path, recorder, run_id, "codex", creds)
    assert hosts == ("api.openai.com", "pypi.org")


def test_the_operators_named_provider_is_the_one_in_the_settings_handed_down(monkeypatch):
    monkeypatch.setenv("BOT_OPENCODE_PROVIDER", "xai")
    creds = _logins(google={"type": "api", "key": REAL_KEY}, xai={"type": "api", "key": REAL_KEY})
    operator = Settings({"BOT_OPENCODE_PROVIDER": "google"}).operator_for("opencode")
    assert direct_hosts(base.get("opencode"), creds, operator) == (GOOGLE,)
