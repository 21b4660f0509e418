"""One record per wire API the model relay speaks: everything the bot knows of that API is declared
in its own module (bot/relay/wire_apis/<api>.py, a `WIRE_API = WireApi(...)`) and read from here
by the relay (bot/relay/apis.py, usage.py, body_policy.py, reservation.py, unavailable.py), the
settings page's key test (bot/settings/keytest.py) and `bot doctor`. Shaped like the adapters'
record (adapters/base.py, adapters/facts.py): declare, then read; no other module names an API.

A fact a record does not declare fails closed:
  no `paths`         nothing is forwarded to it (every request: 404)
  no `providers`     no provider is called with it
  no `body`          every request body is refused (400): the relay forwards only what it can judge
  no `usage`         its replies' usage is not read: a call is charged its maximum
  no `hold`          a call holds the largest output (DEFAULT_MAX_OUTPUT, one answer)
  no `unavailable`   its errors are read by their status alone (a 429 is rate limiting; a 503 is
                     overloaded when its words say so)
  no `key_test`      a key of its providers cannot be tested from the settings page
  no `price_names`   a model is looked up in the price table by its exact name (a name the table
                     does not list is unpriced: the call is refused)

The built-in records are the modules of the bot.relay.wire_apis package (found by listing it, so
this module names none); another is added by `register(record)` or by an installed package under
the `bot.wire_apis` entry-point group (an entry naming a `WireApi`, or a module that registers one).
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.relay.call_usage import CallUsage
from bot.relay.grammar import Judge, Obj

PLUGIN_GROUP = "bot.wire_apis"
# the headers a client may carry a key in (the relay's inside): all are removed before forwarding,
# so a record's key header must be one of them
KEY_CARRIERS = (b"x-api-key", b"authorization", b"x-goog-api-key", b"api-key")

Headers = list[tuple[bytes, bytes]]
UsageRead = tuple[CallUsage | None, str | None]  # (usage, model); usage None when the reply carried none
# where a number may be written: (the objects it may sit in, None for the top level; its names)
Place = tuple[tuple[str | None, ...], tuple[str, ...]]
NOWHERE: Place = ((), ())


class ToolJudge(Judge, Protocol):
    def connector(self, what: str) -> None:
        """A connector to a server the provider reaches itself: allowed and recorded with web
        access, else the request is refused."""


@dataclass(frozen=True)
class Path:
    """A request the relay forwards: `method` and the exact `path`."""

    method: str
    path: bytes
    metered: bool = True  # False: the call produces no usage (a token count, a model list)
    only: str | None = None  # the one provider this path belongs to (it is called with nothing else)
    label: str | None = None  # what the record calls the call, when not the API's name


@dataclass(frozen=True)
class ModelPath:
    """Requests whose path names the model: `pattern`'s first group is the model, its second the verb."""

    method: str
    pattern: re.Pattern[bytes]
    unmetered: frozenset[bytes] = frozenset()  # verbs that produce no usage
    shown: str = ""  # the paths as a person reads them, e.g. /v1beta/models/<model>:<verb>


@dataclass(frozen=True)
class Body:
    """What of a request body goes upstream (bot/relay/body_policy.py reads it)."""

    grammar: Obj  # every field and part the API knows (bot/relay/grammar.py): the rest is dropped
    provider_run: Callable[[dict[str, Any], ToolJudge], None]  # drops (or refuses) what the provider runs
    headers: Callable[[Headers, Judge], Headers] | None = None  # request headers that enable provider tools
    asks_usage: Callable[[dict[str, Any]], bool] | None = None  # makes a stream report its usage; True:
    # the client had not asked, the relay removes it from the reply


@dataclass(frozen=True)
class UsageReading:
    """How a reply tells its tokens (bot/relay/usage.py reads it)."""

    reply: Callable[[Any], UsageRead]  # a parsed JSON reply
    markers: tuple[bytes, ...]  # one occurs in every stream event worth parsing
    keep: Callable[[dict[str, Any]], str | None]  # the slot a stream event's data is kept in, None: not kept
    events: Callable[[dict[str, dict[str, Any]]], UsageRead]  # the usage of the kept events
    pattern: re.Pattern[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # one pass over the bytes finds any marker (a `find` per marker would cost a pass each)
        object.__setattr__(self, "pattern", re.compile(b"|".join(re.escape(m) for m in self.markers) or rb"(?!)"))


@dataclass(frozen=True)
class Hold:
    """Where a request writes its output limit and the number of answers it asks for, every
    spelling the API accepts (bot/relay/reservation.py holds the largest)."""

    limit: Place
    count: Place = NOWHERE


@dataclass(frozen=True)
class Unavailable:
    """Which of the API's errors say the provider cannot serve now (bot/relay/unavailable.py)."""

    overloaded: tuple[int, ...] = ()  # statuses that mean overloaded whatever the body
    quota: tuple[str, ...] = ()  # error types or codes of a 429 that mean the quota is spent


@dataclass(frozen=True)
class CheapCall:
    """The cheapest call that proves a key (the settings page's key test)."""

    models: Mapping[str, str]  # provider -> its cheapest model
    request: Callable[[str, bool], tuple[str, dict[str, Any], dict[str, str]]]  # (model, bearer) ->
    # (path, JSON body, headers besides the key's)


def exact(model: str) -> tuple[str, ...]:
    """The price table's name of a model: its own (what a record that declares no `price_names` gets)."""
    return (model,)


@dataclass(frozen=True)
class WireApi:
    name: str
    key_header: str  # where its providers take their key upstream ("authorization": a bearer token)
    providers: Mapping[str, str]  # provider -> its API root, the default base URL
    error: Callable[[int, str, str], dict[str, Any]]  # (status, message, code) -> the API's error object
    paths: tuple[Path | ModelPath, ...] = ()
    error_prefixes: tuple[bytes, ...] = ()  # a refused path starting so is answered in this API's format
    body: Body | None = None
    usage: UsageReading | None = None
    hold: Hold | None = None
    unavailable: Unavailable = Unavailable()
    key_test: CheapCall | None = None
    price_names: Callable[[str], tuple[str, ...]] = exact
    # ^ the names a model of this API is looked up by in the price table (bot/relay/pricing.py), in order
    title: str = ""  # how docs and the doctor name it


# ---------------------------------------------------------------- the registry

_REGISTRY: dict[str, WireApi] = {}
_ROOTS: dict[str, str] = {}  # provider -> the root its records declare (DEFAULT_BASE may be pointed elsewhere)
DEFAULT_BASE: dict[str, str] = {}  # provider -> root; tests point one at a fake provider in place
KEY_HEADER: dict[str, str] = {}  # provider -> where it takes its key
_loaded = False


def register(api: WireApi) -> None:
    """Adds a record; refuses one that clashes with those registered (the same name, a path another
    API serves, a provider another API sends its key elsewhere or roots elsewhere)."""
    _load()
    _add(api)


def _add(api: WireApi) -> None:
    known = _REGISTRY.get(api.name)
    if known is api:
        return
    if known is not None:
        raise ValueError(f"wire API {api.name!r} is registered twice")
    if api.key_header.encode() not in KEY_CARRIERS:
        raise ValueError(f"wire API {api.name!r}: the relay does not strip {api.key_header!r} from the client")
    taken = {(p.method, p.path) for other in _REGISTRY.values() for p in other.paths if isinstance(p, Path)}
    for path in api.paths:
        if isinstance(path, Path) and (path.method, path.path) in taken:
            raise ValueError(f"wire API {api.name!r}: {path.method} {path.path!r} is another API's")
    for provider, root in api.providers.items():
        if KEY_HEADER.get(provider, api.key_header) != api.key_header:
            raise ValueError(f"provider {provider!r} takes its key in {KEY_HEADER[provider]!r}, "
                               f"not {api.key_header!r}")
        if provider in _ROOTS and _ROOTS[provider] != root:
            raise ValueError(f"provider {provider!r} is at {_ROOTS[provider]}, not {root}")
    _REGISTRY[api.name] = api
    _routes.cache_clear()
    for provider, root in api.providers.items():
        _ROOTS[provider] = root
        DEFAULT_BASE.setdefault(provider, root)
        KEY_HEADER[provider] = api.key_header


def get(name: str) -> WireApi:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown wire API {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def names() -> list[str]:
    _load()
    return list(_REGISTRY)


def records() -> list[WireApi]:
    _load()
    return list(_REGISTRY.values())


@dataclass(frozen=True)
class Routes:
    """The registry's paths, indexed once per change: what a call's routing reads."""

    exact: dict[tuple[str, bytes], tuple[WireApi, Path]]
    patterns: tuple[tuple[WireApi, ModelPath], ...]
    owners: frozenset[str]  # providers some path names as its only one


def routes() -> Routes:
    _load()
    return _routes()


@functools.cache
def _routes() -> Routes:
    exact = {(p.method, p.path): (api, p) for api in _REGISTRY.values() for p in api.paths if isinstance(p, Path)}
    patterns = tuple((api, p) for api in _REGISTRY.values() for p in api.paths if isinstance(p, ModelPath))
    owners = frozenset(path.only for _, path in exact.values() if path.only)
    return Routes(exact, patterns, owners)


def _load() -> None:
    """The built-in records (each module of bot.relay.wire_apis that declares `WIRE_API`), then
    those of installed packages (the operator's install, never a repository's files)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from bot.relay import wire_apis

    for module in sorted(m.name for m in pkgutil.iter_modules(wire_apis.__path__)):
        declared = getattr(importlib.import_module(f"{wire_apis.__name__}.{module}"), "WIRE_API", None)
        if isinstance(declared, WireApi):
            _add(declared)
    from importlib.metadata import entry_points

    for entry in entry_points(group=PLUGIN_GROUP):
        loaded = entry.load()
        if isinstance(loaded, WireApi):
            _add(loaded)


# ---------------------------------------------------------------- helpers for the records

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def dated(model: str) -> tuple[str, ...]:
    """`price_names` for an API whose models have dated snapshots (`-20250929`, `-2025-09-29`): the
    name, then the model it is a snapshot of (a listed snapshot keeps its own price)."""
    return (model, _DATE_SUFFIX.sub("", model))


def without_provider_tools(holder: dict[str, Any], key: str, provider_run: Callable[[Any], str | None],
                           judge: Judge) -> bool:
    """Drops from holder[key] (a tool list) the provider-run tools the judge does not keep
    (`provider_run` names one, None for a tool the client runs); an emptied list is removed. True
    when the list was removed."""
    tools = holder.get(key)
    if not isinstance(tools, list) or not tools:
        return False
    kept = [tool for tool in tools if (what := provider_run(tool)) is None or judge.keeps(what)]
    if len(kept) == len(tools):
        return False
    if kept:
        holder[key] = kept
        return False
    del holder[key]
    return True
