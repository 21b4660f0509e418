"""End to end: the real OpenCode CLI with an Anthropic or a Google key, in a tier-1 sandbox, at its
own default model of that provider, reaches the fake provider only through the model relay. The
sandbox (the CLI's argv, environment and files, its HOME after the run) never holds the real key;
the provider sees it on every call.

The fake provider stands at the provider's own address (apis.DEFAULT_BASE), so no operator gateway
(BOT_OPENCODE_BASE_URL) is set: that would make OpenCode call one OpenAI-compatible provider.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from bot.relay import apis
from tests.fakes.provider import FakeProvider, say
from tests.relay.episode import relay_episode

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

REAL_KEY = "sk-real-opencode-PROVIDER-KEY-0123456789"
KEY_OF = {"anthropic": "ANTHROPIC_API_KEY", "google": "GOOGLE_GENERATIVE_AI_API_KEY"}


@dataclass
class Ran:
    result: object
    fake: FakeProvider
    invocation: adapters.Invocation
    home: Path
    calls: list


async def _episode(provider: str, root: Path, monkeypatch) -> Ran:
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[])
    with FakeProvider() as fake:
        fake.script(say("Answered through the relay."))
        monkeypatch.setitem(apis.DEFAULT_BASE, provider, fake.url)
        creds = adapters.Credentials(env={KEY_OF[provider]: REAL_KEY}, source="requester")
        relayed = await relay_episode("opencode", creds, ctx, root)
    return Ran(relayed.result, fake, relayed.invocation, relayed.config.home, relayed.calls)


@pytest.fixture(scope="module", params=sorted(KEY_OF))
def ran(request, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        for variable in ("BOT_OPENCODE_BASE_URL", "BOT_OPENCODE_MODEL", "BOT_OPENCODE_PROVIDER"):
            monkeypatch.delenv(variable, raising=False)
        root = tmp_path_factory.mktemp(f"opencode-{request.param}")
        return asyncio.run(_episode(request.param, root, monkeypatch))


def test_opencode_answers_through_the_relay_with_its_providers_key(ran):
    assert ran.result.ok, (ran.result.error, ran.result.stderr_tail)
    assert "Answered through the relay." in ran.result.text
    assert ran.calls and all(call.outcome == "ok" for call in ran.calls)


def test_the_provider_sees_the_real_key_on_every_call(ran):
    seen = [" ".join(r.headers.values()) for r in ran.fake.requests if r.api != "other"]
    assert seen and all(REAL_KEY in headers for headers in seen)


def test_the_key_is_not_in_opencodes_argv_environment_or_files(ran):
    given = " ".join(ran.invocation.argv) + " ".join(ran.invocation.env.values()) + \
        " ".join(value.decode(errors="replace") for value in ran.invocation.files.values())
    assert REAL_KEY not in given


def test_no_file_opencode_left_in_its_home_holds_the_key(ran):
    holding = [path for path in ran.home.rglob("*")
               if path.is_file() and not path.is_symlink() and REAL_KEY.encode() in path.read_bytes()]
    assert holding == []
