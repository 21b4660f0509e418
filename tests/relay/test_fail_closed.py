"""A fact an adapter does not declare fails closed: a credential with no declared relay channel is
refused (never run with the real key in the sandbox), and an adapter with no declared resume state
resumes nothing and says so in the record."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters import base
from adapters.base import CliAdapter, Credentials, Episode, Event, Invocation
from bot.credentials.resolve import Kind
from bot.episode.model_channel import credential_modes, model_channel
from bot.episode.stop import Stop
from sandbox.base import SandboxConfig
from tests.entry_settings import current
from tests.relay.conftest import REAL_KEY


class Fifth(CliAdapter):
    """A fifth CLI that declares the least an adapter can: no relay channel, no resume state."""

    name = "fifth"
    executable = "fifth"
    default_allowed_hosts = ("api.fifth.example",)
    credential_env = ("FIFTH_API_KEY",)
    unobserved = ("fifth's model calls",)

    def command(self, episode: Episode) -> Invocation:
        return Invocation(argv=[self.executable, "--print"], env=dict(episode.credentials.env),
                          stdin=episode.prompt.encode())

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        return []


class FifthWithALoginFile(Fifth):
    direct_credentials = ("FIFTH_LOGIN",)


@pytest.fixture
def fifth(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "fifth", Fifth)
    return base.get("fifth")


def _ctx() -> SimpleNamespace:
    return SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[], settings=current())


def _sandbox(tmp_path: Path, adapter: base.Adapter) -> SandboxConfig:
    return SandboxConfig(workdir=tmp_path, home=tmp_path / "home",
                         allowed_hosts=tuple(adapter.default_allowed_hosts) + ("pypi.org",))


async def _open(adapter, creds, recorder, run_id, config) -> list[Invocation]:
    """The invocations built inside the channel, as a job builds its episode's."""
    built = []
    async with model_channel(adapter.name, adapter, creds, _ctx(), recorder, run_id, config) as channel:
        episode = Episode(prompt="hi", workdir="/work", home=config.home, credentials=channel.credentials,
                          base_url=channel.base_url)
        built.append(adapter.command(episode))
    return built


async def test_a_key_with_no_declared_relay_channel_is_refused_with_the_reason(fifth, tmp_path, recorder, run_id):
    creds = Credentials(env={"FIFTH_API_KEY": REAL_KEY})
    with pytest.raises(Stop) as refused:
        await _open(fifth, creds, recorder, run_id, _sandbox(tmp_path, fifth))
    assert refused.value.text == ("the fifth adapter declares no model relay channel for FIFTH_API_KEY: "
                                  "refusing to put the key inside the sandbox")


async def test_a_refused_key_never_reaches_the_sandbox(fifth, tmp_path, recorder, run_id):
    config = _sandbox(tmp_path, fifth)
    built: list[Invocation] = []
    with pytest.raises(Stop):
        built = await _open(fifth, Credentials(env={"FIFTH_API_KEY": REAL_KEY}), recorder, run_id, config)
    gaps = [e["raw"] for e in recorder.events(run_id) if e["tier"] == "unobserved"]
    assert built == [] and not any(gap.startswith("key in the sandbox") for gap in gaps)
    assert REAL_KEY not in repr(vars(config))


async def test_a_refused_run_is_recorded_as_failed_with_the_reason(fifth, tmp_path, recorder, run_id):
    with pytest.raises(Stop):
        await _open(fifth, Credentials(env={"FIFTH_API_KEY": REAL_KEY}), recorder, run_id, _sandbox(tmp_path, fifth))
    run = recorder.db.query("select status, summary from runs where id = ?", [run_id])[0]
    assert run["status"] == "failed" and "declares no model relay channel for FIFTH_API_KEY" in run["summary"]


async def test_a_credential_the_adapter_declares_direct_runs_with_the_key_in_the_sandbox(
        monkeypatch, tmp_path, recorder, run_id):
    monkeypatch.setitem(base._REGISTRY, "fifth", FifthWithALoginFile)
    adapter = base.get("fifth")
    built = await _open(adapter, Credentials(env={"FIFTH_LOGIN": REAL_KEY}), recorder, run_id,
                        _sandbox(tmp_path, adapter))
    assert built[0].env == {"FIFTH_LOGIN": REAL_KEY}


def test_doctor_names_an_undeclared_credential_as_refused(fifth, monkeypatch):
    kind = Kind("fifth", "api_key", "Fifth API key", "", env=("FIFTH_API_KEY",))
    monkeypatch.setattr("bot.episode.model_channel.kinds_for", lambda agent: [kind])
    assert credential_modes("fifth", current()) == {"relay": [], "direct": [], "refused": ["Fifth API key"]}


def test_an_adapter_that_declares_no_resume_state_does_not_resume(fifth):
    assert fifth.supports_resume is False


async def test_an_adapter_that_declares_no_resume_state_says_so_in_the_record(tmp_path, recorder, run_id,
                                                                               monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "fifth", FifthWithALoginFile)
    adapter = base.get("fifth")
    await _open(adapter, Credentials(env={"FIFTH_LOGIN": REAL_KEY}), recorder, run_id, _sandbox(tmp_path, adapter))
    gaps = [e["raw"] for e in recorder.events(run_id) if e["tier"] == "unobserved"]
    assert "its sessions: the fifth adapter declares no resume state, so every turn starts fresh" in gaps


def test_doctors_table_names_a_refused_credential(fifth, monkeypatch):
    from bot.cli import doctor

    kind = Kind("fifth", "api_key", "Fifth API key", "", env=("FIFTH_API_KEY",))
    monkeypatch.setattr("bot.episode.model_channel.kinds_for", lambda agent: [kind])
    text = doctor.render([], [], [{"agent": "fifth", **credential_modes("fifth", current())}])
    line = next(line for line in text.splitlines() if line.startswith("fifth"))
    assert line.endswith("refused (no relay channel declared): Fifth API key")
