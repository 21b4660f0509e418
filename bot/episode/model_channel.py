"""The episode's model channel: through the model relay when the credential allows it, else direct.

Relay mode (docs/relay.md): the relay holds the real credential on the host; the CLI gets the relay's
URL as its base URL (`Episode.base_url`, reached inside the sandbox as a loopback gateway at the
same address) and the relay's per-episode token where it expects its key. The sandbox may then reach
no provider host: its egress allows only the repository's own extra hosts, and the operator's
gateway (BOT_<AGENT>_BASE_URL) is reached by the relay, not from inside.

Each adapter declares the channels the relay can carry for it (`relay_channels`) and the
credentials it runs in direct mode on purpose (`direct_credentials`: a Codex login file with
neither a ChatGPT login nor a key, OpenCode's `auth.json` with an OAuth login, a custom OpenCode
provider's key). In direct mode the key enters the sandbox and the record declares it ("key in
the sandbox: …"), so the provenance and `bot doctor` can say so. A credential neither declares is
refused: the episode ends with the reason, and the key never enters the sandbox.

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

from adapters import base
from adapters.base import ANY_OTHER_KEY, Credentials, gateway_root
from bot.config import Settings
from bot.credentials.resolve import (
    Kind,
    as_credentials,
    kinds_for,
    operator_fix_hint,
    settings_url,
)
from bot.episode import login_store
from bot.episode.asker import Asker
from bot.episode.direct_hosts import open_provider_hosts
from bot.episode.resume_state import resume_gap
from bot.episode.stop import Stop
from bot.record.recorder import Recorder
from bot.relay import chatgpt
from bot.relay.budgets import AUTOMATION_CAP, AutomationSpend, Budget, Caps, Ledger, Scope, operator_caps
from bot.relay.pricing import load_table
from bot.relay.retry import RetryPolicy
from bot.relay.server import ModelRelay, Upstream
from sandbox.base import SandboxConfig

# the adapters' declared gaps that relay mode closes (their wording in adapters/*.py)
CLOSED_BY_RELAY = ("model calls", "direct channel")


@dataclass(frozen=True)
class Plan:
    """How the relay would carry one credential, or why it cannot (`upstream` None): then either
    the adapter runs it direct on purpose (`direct_reason`) or it is refused (`refused`)."""

    upstream: Upstream | None
    inside_env: tuple[str, ...] = ()
    direct_reason: str = ""
    refused: str = ""


def plan(agent: str, creds: Credentials, settings: Settings) -> Plan:
    """`settings`: the entry point's (the operator's gateway and OpenAI billing headers)."""
    if creds.files:
        return _login_file_plan(agent, creds, settings)
    adapter = base.get(agent)
    if adapter.provider_logins and adapter.provider_logins in creds.env:
        key = _single_provider_key(creds.env[adapter.provider_logins], dict(adapter.provider_keys))
        if key is not None:
            return plan(agent, Credentials(env={key[0]: key[1]}, source=creds.source), settings)
    gateway = settings.agent_base_url(agent)
    for channel in adapter.relay_channels:
        if gateway and not channel.through_gateway:
            continue
        value = creds.env.get(channel.variable)
        if value:
            provider = channel.provider
            return Plan(Upstream(provider, value, base_url=gateway_root(gateway) if gateway else None,
                                 bearer=channel.bearer, scope=creds.source,
                                 fix_hint=fix_hint(settings, creds.source, channel.variable),
                                 billing=openai_billing(settings) if provider == "openai" else ()),
                        channel.inside_env)
    held = ", ".join(sorted(creds.env)) or "none"
    return _direct_or_refused(agent, sorted(creds.env),
                              f"{agent} cannot be pointed at the relay with this credential ({held})")


def _direct_or_refused(agent: str, held: list[str], reason: str, *, files: bool = False) -> Plan:
    """Direct mode only for what the adapter declares it runs direct (ANY_OTHER_KEY: any key
    variable, never a login file); anything else is refused."""
    declared = base.get(agent).direct_credentials
    any_key = ANY_OTHER_KEY in declared and not files
    undeclared = [name for name in held if name not in declared and not any_key]
    if held and not undeclared:
        return Plan(None, direct_reason=reason)
    return Plan(None, refused=f"the {agent} adapter declares no model relay channel for "
                              f"{(undeclared or ['its credential'])[0]}: refusing to put the key inside the sandbox")


def openai_billing(settings: Settings) -> tuple[tuple[str, str], ...]:
    """The operator's OpenAI organization and project headers (never the sandbox's)."""
    configured = (("OpenAI-Organization", settings.text("BOT_OPENAI_ORGANIZATION")),
                  ("OpenAI-Project", settings.text("BOT_OPENAI_PROJECT")))
    return tuple((name, value) for name, value in configured if value)


def _single_provider_key(text: str, keys: dict[str, str]) -> tuple[str, str] | None:
    """(variable, key) when a CLI's logins (OpenCode's auth.json) hold one login and it is an API key
    of a provider the relay knows; its OAuth logins (and several logins, where the user picks the
    provider) stay direct."""
    try:
        logins = json.loads(text)
    except ValueError:
        return None
    if not isinstance(logins, dict) or len(logins) != 1:
        return None
    (provider, login), = logins.items()
    if provider not in keys or not isinstance(login, dict) or login.get("type") != "api" \
            or not isinstance(login.get("key"), str) or not login["key"]:
        return None
    return keys[provider], login["key"]


def _login_file_plan(agent: str, creds: Credentials, settings: Settings) -> Plan:
    """Codex's `auth.json`: a ChatGPT login is held (and refreshed) by the relay, Codex gets a
    placeholder login; an API-key login is relayed as the key. Other login files stay direct."""
    held = base.get(agent).chatgpt_login
    text = creds.files.get(held) if held and len(creds.files) == 1 else None
    login = chatgpt.Login.parse(text, settings.word("BOT_CHATGPT_TOKEN_URL")) if text else None
    if login is not None:  # ChatGPT's backend, never the operator's API gateway
        return Plan(Upstream("chatgpt", login.access_token, scope=creds.source, login=login,
                             fix_hint=fix_hint(settings, creds.source, "the ChatGPT login (auth.json)")))
    key = chatgpt.api_key(text) if text else None
    channels = base.get(agent).relay_channels
    if key and channels:  # an API key in the login file goes as the adapter's first relayed key
        return plan(agent, Credentials(env={channels[0].variable: key}, source=creds.source), settings)
    return _direct_or_refused(agent, sorted(creds.files),
                              f"{agent}'s login file ({', '.join(sorted(creds.files))}) cannot be relayed yet",
                              files=True)


def credential_modes(agent: str, settings: Settings) -> dict[str, list[str]]:
    """How each credential kind `agent` can be given runs: "relay", or "direct" (the key in the
    sandbox), by the same `plan()` an episode uses with the same `settings`. The kinds are the
    settings page's, plus the provider keys only the operator's environment can give OpenCode."""

    modes: dict[str, list[str]] = {"relay": [], "direct": [], "refused": []}
    given = [(kind.label, as_credentials(kind, _probe(kind), "operator")) for kind in kinds_for(agent)]
    covered = {var for kind in kinds_for(agent) for var in kind.env}
    given += [(f"{var} (operator)", Credentials(env={var: "probe"}, source="operator"))
              for _provider, var in base.get(agent).provider_keys if var not in covered]
    for label, creds in given:
        chosen = plan(agent, creds, settings)
        modes["relay" if chosen.upstream is not None else "refused" if chosen.refused else "direct"].append(label)
    if not modes["refused"]:
        del modes["refused"]
    return modes


def _probe(kind: Kind) -> str:
    """A stand-in value of the kind's shape (a login file is judged by what it holds)."""
    if kind.file and kind.file == base.get(kind.agent).chatgpt_login:
        return json.dumps({"tokens": {"access_token": "probe", "refresh_token": "probe", "account_id": "probe"}})
    return "probe"


def fix_hint(settings: Settings, source: str, variable: str) -> str:

    page = settings_url(settings)
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

    def explain_stop(self, result: base.Result) -> None:
        """When the relay ended the episode, its reason is the answer's, not "cancelled": which
        budget, what was spent and how to raise it; or whose key was rejected and where to fix it."""
        if self.relay is None or self.relay.stopped is None:
            return
        result.ok = False
        result.failure = "auth" if self.relay.stop_kind == "key" else "refused"
        result.error = self.relay.stopped


@contextlib.asynccontextmanager
async def model_channel(agent: str, adapter: base.Adapter, creds: Credentials, ctx: Asker, recorder: Recorder,
                        run_id: str, sandbox_config: SandboxConfig, *, on_retry: Callable[[str], object] | None = None,
                        on_stop: Callable[[str], object] | None = None,
                        repo_budgets: Mapping[str, Any] | None = None,
                        web_access: bool = False, automation: AutomationSpend | None = None) -> AsyncIterator[Channel]:
    """Relay mode when `plan()` allows it (the sandbox config is narrowed in place), else direct,
    as the job's settings (`ctx.settings`) configure it. Declares the run's unobserved gaps either way
    (the adapter's, less what the relay closes). `repo_budgets` (`.github/bot.yml`'s `budgets`, int
    or float per cap) can only lower the operator's caps. `web_access` (the repository's): the relay
    lets provider-run tools through, else drops them. `automation`: an automation's run, whose calls
    also count against that automation's day, capped by its `max_usd_per_day`."""
    settings = ctx.settings
    chosen = plan(agent, creds, settings)
    if chosen.refused:
        recorder.finish_run(run_id, "failed", {"error": chosen.refused})
        raise Stop(chosen.refused)
    if no_resume := resume_gap(adapter):
        recorder.declare_gap(run_id, no_resume)
    if chosen.upstream is None:
        for gap in tuple(getattr(adapter, "unobserved", ())) + (f"key in the sandbox: {chosen.direct_reason}",):
            recorder.declare_gap(run_id, gap)
        open_provider_hosts(sandbox_config, adapter, creds, settings.operator_for(agent))
        yield Channel(creds, settings.agent_base_url(agent), direct_reason=chosen.direct_reason)
        return
    for gap in relay_gaps(tuple(getattr(adapter, "unobserved", ()))):
        recorder.declare_gap(run_id, gap)
    scope = Scope(conversation=ctx.conversation, requester=str(ctx.requester_id) if ctx.requester_id else None,
                  installation=str(ctx.installation_id) if ctx.installation_id else None,
                  automation=automation.key if automation else None)
    repo_caps = dict(repo_budgets or {}) | ({AUTOMATION_CAP: automation.usd_per_day} if automation else {})
    ledger = Ledger(recorder.db)
    budget = Budget(operator=operator_caps(settings), repo=Caps(**repo_caps) if repo_caps else None,
                    prior=ledger.spent(scope))
    login = chosen.upstream.login
    async with ModelRelay(chosen.upstream, recorder, run_id, budget=budget, ledger=ledger, spend_scope=scope,
                          prices=load_table(settings), retry=RetryPolicy.from_settings(settings),
                          on_retry=on_retry, on_stop=on_stop, web_access=web_access,
                          on_login_refresh=login_store.saver(agent, creds.source, ctx) if login else None) as relay:
        recorder.secrets.add(relay.token)  # the job's secrets: the recorder holds them
        assert relay.port is not None  # set by __aenter__
        narrow_sandbox(sandbox_config, adapter, relay.port)
        files = {adapter.chatgpt_login: chatgpt.placeholder_auth(relay.token, login)} if login else {}
        inside = Credentials(env={name: relay.token for name in chosen.inside_env}, files=files, source=creds.source)
        yield Channel(inside, relay.url, relay=relay)


def narrow_sandbox(sandbox_config: SandboxConfig, adapter: base.Adapter, relay_port: int) -> None:
    """No provider host from inside: the relay (a loopback gateway at its own port) is the way out."""
    providers = set(getattr(adapter, "default_allowed_hosts", ()))
    sandbox_config.allowed_hosts = tuple(h for h in sandbox_config.allowed_hosts if h not in providers)
    sandbox_config.gateways = (f"127.0.0.1:{relay_port}",)

