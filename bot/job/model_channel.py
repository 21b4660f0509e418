"""The episode's model channel: through the model relay when the credential allows it, else direct.

Relay mode (DESIGN §5, §8): the relay holds the real credential on the host; the CLI gets the relay's
URL as its base URL (`Episode.base_url`, reached inside the sandbox as a loopback gateway at the
same address) and the relay's per-episode token where it expects its key. The sandbox may then reach
no provider host: its egress allows only the repository's own extra hosts, and the operator's
gateway (BOT_<AGENT>_BASE_URL) is reached by the relay, not from inside.

Direct mode, where a CLI cannot be pointed at the relay for a credential kind (a login file such as
Codex's ChatGPT `auth.json` or OpenCode's `auth.json`, a custom OpenCode provider's key): the key
enters the sandbox as before and the record declares it ("key in the sandbox: …"), so the
provenance and `bot doctor` can say so.

    async with model_channel(agent, adapter, creds, ctx, recorder, run_id, sandbox_config,
                             on_retry=tracking.note, on_stop=lambda reason: kill.set()) as channel:
        episode = Episode(..., credentials=channel.credentials, base_url=channel.base_url)
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adapters.base import Credentials, gateway_root
from bot import config
from bot.credentials.resolve import (
    OPENCODE_PROVIDER_ENV,
    Kind,
    as_credentials,
    kinds_for,
    operator_fix_hint,
    settings_url,
)
from bot.job import login_store
from bot.job.direct_hosts import open_provider_hosts
from bot.record.recorder import Recorder
from bot.relay import chatgpt
from bot.relay.apis import KEY_HEADER
from bot.relay.budgets import Budget, Caps, Ledger, Scope, operator_caps
from bot.relay.server import ModelRelay, Upstream

# agent -> (variable in the resolved credentials, provider, sent as bearer, variables the CLI reads it from)
RELAYABLE: dict[str, tuple[tuple[str, str, bool, tuple[str, ...]], ...]] = {
    "claude": (("CLAUDE_CODE_OAUTH_TOKEN", "anthropic", True, ("CLAUDE_CODE_OAUTH_TOKEN",)),
               ("ANTHROPIC_API_KEY", "anthropic", False, ("ANTHROPIC_API_KEY",))),
    "codex": (("OPENAI_API_KEY", "openai", True, ("CODEX_API_KEY",)),
              ("CODEX_API_KEY", "openai", True, ("CODEX_API_KEY",))),
    "gemini": (("GEMINI_API_KEY", "google", False, ("GEMINI_API_KEY",)),),
    # OpenCode's own provider for each key, its baseURL pointed at the relay (adapters/opencode.py);
    # the relay's provider names are OpenCode's provider ids
    "opencode": tuple((variable, provider, KEY_HEADER[provider] == "authorization", (variable,))
                      for provider, variable in OPENCODE_PROVIDER_ENV.items()),
}
# an operator gateway for OpenCode is one OpenAI-compatible provider reading OPENAI_API_KEY
OPENCODE_GATEWAY_KEY = "OPENAI_API_KEY"
OPENCODE_AUTH = "OPENCODE_AUTH_CONTENT"  # OpenCode's auth.json, as the settings page stores it
# the adapters' declared gaps that relay mode closes (their wording in adapters/*.py)
CLOSED_BY_RELAY = ("model calls", "direct channel")


@dataclass(frozen=True)
class Plan:
    """How the relay would carry one credential, or why it cannot (`upstream` None)."""

    upstream: Upstream | None
    inside_env: tuple[str, ...] = ()
    direct_reason: str = ""


def plan(agent: str, creds: Credentials) -> Plan:
    if creds.files:
        return _login_file_plan(agent, creds)
    if agent == "opencode" and OPENCODE_AUTH in creds.env:
        key = _opencode_auth_key(creds.env[OPENCODE_AUTH])
        if key is not None:
            return plan(agent, Credentials(env={key[0]: key[1]}, source=creds.source))
    gateway = config.agent_base_url(agent)
    for variable, provider, bearer, inside in RELAYABLE.get(agent, ()):
        if agent == "opencode" and gateway and variable != OPENCODE_GATEWAY_KEY:
            continue  # the gateway speaks OpenAI's API: OpenCode calls it as one OpenAI-compatible provider
        value = creds.env.get(variable)
        if value:
            return Plan(Upstream(provider, value, base_url=gateway_root(gateway) if gateway else None,
                                 bearer=bearer, scope=creds.source, fix_hint=fix_hint(creds.source, variable),
                                 billing=openai_billing() if provider == "openai" else ()),
                        inside)
    held = ", ".join(sorted(creds.env)) or "none"
    return Plan(None, direct_reason=f"{agent} cannot be pointed at the relay with this credential ({held})")


def openai_billing() -> tuple[tuple[str, str], ...]:
    """The operator's OpenAI organization and project headers (never the sandbox's)."""
    configured = (("OpenAI-Organization", config.env("BOT_OPENAI_ORGANIZATION")),
                  ("OpenAI-Project", config.env("BOT_OPENAI_PROJECT")))
    return tuple((name, value) for name, value in configured if value)


def _opencode_auth_key(text: str) -> tuple[str, str] | None:
    """(variable, key) when OpenCode's auth.json holds one login and it is an API key of a provider
    the relay knows; its OAuth logins (and several logins, where the user picks the provider) stay
    direct."""
    try:
        logins = json.loads(text)
    except ValueError:
        return None
    if not isinstance(logins, dict) or len(logins) != 1:
        return None
    (provider, login), = logins.items()
    if provider not in OPENCODE_PROVIDER_ENV or not isinstance(login, dict) or login.get("type") != "api" \
            or not isinstance(login.get("key"), str) or not login["key"]:
        return None
    return OPENCODE_PROVIDER_ENV[provider], login["key"]


def _login_file_plan(agent: str, creds: Credentials) -> Plan:
    """Codex's `auth.json`: a ChatGPT login is held (and refreshed) by the relay, Codex gets a
    placeholder login; an API-key login is relayed as the key. Other login files stay direct."""
    text = creds.files.get(chatgpt.AUTH_FILE) if agent == "codex" and len(creds.files) == 1 else None
    login = chatgpt.Login.parse(text) if text else None
    if login is not None:  # ChatGPT's backend, never the operator's API gateway
        return Plan(Upstream("chatgpt", login.access_token, scope=creds.source, login=login,
                             fix_hint=fix_hint(creds.source, "the ChatGPT login (auth.json)")))
    key = chatgpt.api_key(text) if text else None
    if key:
        return plan(agent, Credentials(env={"CODEX_API_KEY": key}, source=creds.source))
    return Plan(None, direct_reason=f"{agent}'s login file ({', '.join(sorted(creds.files))}) cannot be "
                                    "relayed yet")


def credential_modes(agent: str) -> dict[str, list[str]]:
    """How each credential kind `agent` can be given runs: "relay", or "direct" (the key in the
    sandbox), by the same `plan()` an episode uses. The kinds are the settings page's, plus the
    provider keys only the operator's environment can give OpenCode."""

    modes: dict[str, list[str]] = {"relay": [], "direct": []}
    given = [(kind.label, as_credentials(kind, _probe(kind), "operator")) for kind in kinds_for(agent)]
    if agent == "opencode":
        covered = {var for kind in kinds_for(agent) for var in kind.env}
        given += [(f"{var} (operator)", Credentials(env={var: "probe"}, source="operator"))
                  for var in OPENCODE_PROVIDER_ENV.values() if var not in covered]
    for label, creds in given:
        modes["relay" if plan(agent, creds).upstream is not None else "direct"].append(label)
    return modes


def _probe(kind: Kind) -> str:
    """A stand-in value of the kind's shape (a login file is judged by what it holds)."""
    if kind.file == chatgpt.AUTH_FILE:
        return json.dumps({"tokens": {"access_token": "probe", "refresh_token": "probe", "account_id": "probe"}})
    return "probe"


def fix_hint(source: str, variable: str) -> str:

    page = settings_url()
    where = f"the settings page ({page})" if page else "the settings page"
    return {"requester": f"connect a new key on {where}",
            "repository": f"a repository admin can connect a new key on {where}",
            "installation": f"an organization owner can connect a new key on {where}",
            }.get(source) or operator_fix_hint(variable)


def relay_gaps(declared: tuple[str, ...]) -> tuple[str, ...]:
    """The adapter's gaps that remain when its model calls go through the relay."""
    return tuple(gap for gap in declared if not any(closed in gap for closed in CLOSED_BY_RELAY))


@dataclass
class Channel:
    credentials: Credentials
    base_url: str | None
    relay: ModelRelay | None = None
    direct_reason: str = ""

    def explain_stop(self, result: Any) -> None:
        """When the relay ended the episode, its reason is the answer's, not "cancelled": which
        budget, what was spent and how to raise it; or whose key was rejected and where to fix it."""
        if self.relay is None or self.relay.stopped is None:
            return
        result.ok = False
        result.failure = "auth" if self.relay.stop_kind == "key" else "refused"
        result.error = self.relay.stopped


@contextlib.asynccontextmanager
async def model_channel(agent: str, adapter: Any, creds: Credentials, ctx: Any, recorder: Recorder, run_id: str,
                        sandbox_config: Any, *, on_retry: Callable[[str], Any] | None = None,
                        on_stop: Callable[[str], Any] | None = None,
                        repo_budgets: Mapping[str, Any] | None = None,
                        web_access: bool = False) -> AsyncIterator[Channel]:
    """Relay mode when `plan()` allows it (the sandbox config is narrowed in place), else direct.
    Declares the run's unobserved gaps either way (the adapter's, less what the relay closes).
    `repo_budgets` (`.github/bot.yml`'s `budgets`, int or float per cap) can only lower the operator's caps.
    `web_access` (the repository's): the relay lets provider-run tools through, else drops them."""
    chosen = plan(agent, creds)
    if chosen.upstream is None:
        for gap in tuple(getattr(adapter, "unobserved", ())) + (f"key in the sandbox: {chosen.direct_reason}",):
            recorder.declare_gap(run_id, gap)
        open_provider_hosts(sandbox_config, agent, adapter, creds)
        yield Channel(creds, config.agent_base_url(agent), direct_reason=chosen.direct_reason)
        return
    for gap in relay_gaps(tuple(getattr(adapter, "unobserved", ()))):
        recorder.declare_gap(run_id, gap)
    scope = Scope(conversation=ctx.conversation, requester=str(ctx.requester_id) if ctx.requester_id else None,
                  installation=str(ctx.installation_id) if ctx.installation_id else None)
    ledger = Ledger(recorder.db)
    budget = Budget(operator=operator_caps(), repo=Caps(**repo_budgets) if repo_budgets else None,
                    prior=ledger.spent(scope))
    login = chosen.upstream.login
    async with ModelRelay(chosen.upstream, recorder, run_id, budget=budget, ledger=ledger, spend_scope=scope,
                          on_retry=on_retry, on_stop=on_stop, web_access=web_access,
                          on_login_refresh=login_store.saver(creds.source, ctx) if login else None) as relay:
        ctx.secrets.append(relay.token)
        assert relay.port is not None  # set by __aenter__
        narrow_sandbox(sandbox_config, adapter, relay.port)
        files = {chatgpt.AUTH_FILE: chatgpt.placeholder_auth(relay.token, login)} if login else {}
        inside = Credentials(env={name: relay.token for name in chosen.inside_env}, files=files, source=creds.source)
        yield Channel(inside, relay.url, relay=relay)


def narrow_sandbox(sandbox_config: Any, adapter: Any, relay_port: int) -> None:
    """No provider host from inside: the relay (a loopback gateway at its own port) is the way out."""
    providers = set(getattr(adapter, "default_allowed_hosts", ()))
    sandbox_config.allowed_hosts = tuple(h for h in sandbox_config.allowed_hosts if h not in providers)
    sandbox_config.gateways = (f"127.0.0.1:{relay_port}",)

