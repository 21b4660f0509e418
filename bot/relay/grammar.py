"""The request grammar the relay accepts, per API: the fields and the content parts it knows, each
declared here with what it may carry. A request is read against it before it goes upstream
(bot/relay/body_policy.py calls `read`):

- an unknown field, at the top or inside an object the grammar knows, is removed;
- an unknown part or item (a content part type, a Responses input item, a Gemini part's data kind)
  is removed, and a content part is replaced by a short text saying what was removed, so the
  conversation stays well formed and the model knows;
- a part the provider would fetch or look up itself (`Url`: an image, document or file given by an
  address; `Ref`: a file the provider holds) passes only when the repository turned web access on.
  A `data:` URL or inline base64 is the part's own data and always passes. Results of provider-run
  tools in the history (`web_only` objects) are judged the same way.

Every removal is recorded by the judge (`dropped`); every part passed under web access is recorded
(`allowed`). The record names an address; the stand-in text sent to the model never does.

Also here: which models search the web on every call (`searches_every_call`, `model_refusal`): a
search-preview or deep-research model, a `:online` / `-online` variant, a search-first family
(Perplexity's Sonar, Groq's Compound). Such a model is refused unless web access is on.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

MAX_DEPTH = 16  # parts inside parts (a tool result's content, a Gemini function response's parts)
_DATA_URL = re.compile(r"\s*data:", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/=_\-\s]*\Z")
_SEARCH_MODEL = re.compile(r"search-preview|search-api|deep-research|[:-]online$|(^|/)sonar|perplexity|"
                           r"(^|/)compound(-|$)", re.IGNORECASE)
OFF = "web access is off for this repository"
UNKNOWN = "the relay forwards only the parts it knows"


class Judge(Protocol):
    def keeps(self, what: str) -> bool:
        """Whether a web-only item passes (recorded as allowed or dropped)."""

    def drop(self, what: str) -> None:
        """Record an item removed whatever the web access."""


class _Out(Exception):
    """The value may not go upstream (already recorded); `label` says what it was, without its address."""

    def __init__(self, label: str, reason: str):
        super().__init__(label)
        self.label, self.reason = label, reason


# ---------------------------------------------------------------- the rules a value is read by

class _Pass:
    """Any value: text, ids, numbers, a tool's arguments, settings without an address in them."""


PASS = _Pass()


@dataclass(frozen=True)
class Url:
    """An address a part's content comes from; its own data (`data:` or base64) always passes."""

    label: str


@dataclass(frozen=True)
class Ref:
    """A file the provider holds, named by its id."""

    label: str


@dataclass(frozen=True)
class Obj:
    name: str
    keys: dict[str, Rule]  # mutable only while the grammar is built (a Gemini request holds one)
    web_only: str | None = None  # the provider ran or fetched something for it: any keys, web access only


@dataclass(frozen=True)
class Union:
    name: str  # "content part"
    members: dict[str, Obj]  # mutable only while the grammar is built (members holding the union)
    tag: Callable[[dict[str, Any]], str | None]
    stand_in: Callable[[str], dict[str, Any]] | None = None  # takes a removed member's place; None: gone


@dataclass(frozen=True)
class Many:
    of: Obj | Union
    text: bool = False  # a plain string stands for the list (`"content": "hi"`)


@dataclass(frozen=True)
class One:
    of: Obj | Union


Rule = _Pass | Url | Ref | Obj | Many | One


# ---------------------------------------------------------------- reading a request

def read(top: Obj, request: dict[str, Any], judge: Judge) -> None:
    """Removes from `request` (in place) what the request grammar `top` does not let through."""
    for key in list(request):
        rule = top.keys.get(key)
        if rule is None:
            judge.drop(f"unknown field `{key[:80]}`")
            del request[key]
            continue
        try:
            _value(rule, request[key], judge, 0)
        except _Out:
            del request[key]


def _value(rule: Rule, value: Any, judge: Judge, depth: int) -> None:
    if isinstance(rule, _Pass):
        return
    if isinstance(rule, Url):
        if _remote(value) and not judge.keeps(f"{rule.label} {str(value)[:200]}"):
            raise _Out(rule.label, OFF)
    elif isinstance(rule, Ref):
        if not judge.keeps(f"{rule.label} {str(value)[:200]}"):
            raise _Out(rule.label, OFF)
    elif isinstance(rule, Many):
        _many(rule, value, judge, depth + 1)
    else:
        _member(rule.of if isinstance(rule, One) else rule, value, judge, depth)


def _remote(value: Any) -> bool:
    """Anything but the part's own data: a `data:` URL, or base64 (standard or URL-safe)."""
    if not isinstance(value, str):
        return True
    return not (_DATA_URL.match(value) or _BASE64.match(value))


def _many(rule: Many, value: Any, judge: Judge, depth: int) -> None:
    if value is None or (rule.text and isinstance(value, str)):
        return
    if not isinstance(value, list):
        judge.drop(f"a {rule.of.name} list that is not a list")
        raise _Out(f"a {rule.of.name} list", UNKNOWN)
    if depth > MAX_DEPTH:
        judge.drop(f"{rule.of.name}s nested over {MAX_DEPTH} deep")
        raise _Out(f"{rule.of.name}s nested too deep", UNKNOWN)
    kept = []
    for item in value:
        try:
            _member(rule.of, item, judge, depth)
        except _Out as out:
            stand_in = rule.of.stand_in if isinstance(rule.of, Union) else None
            if stand_in is not None:
                kept.append(stand_in(f"[the model relay removed {out.label} here: {out.reason}]"))
            continue
        kept.append(item)
    value[:] = kept


def _member(shape: Obj | Union, value: Any, judge: Judge, depth: int) -> None:
    if not isinstance(value, dict):
        judge.drop(f"a {shape.name} that is not an object")
        raise _Out(f"a {shape.name}", UNKNOWN)
    _object(shape if isinstance(shape, Obj) else _tagged(shape, value, judge), value, judge, depth)


def _tagged(union: Union, value: dict[str, Any], judge: Judge) -> Obj:
    """The member of `union` that `value` is, or out when it is none of them."""
    tag = union.tag(value)
    found = union.members.get(tag) if tag is not None else None
    if found is None:
        label = f"an unknown {union.name} `{str(tag)[:80]}`"
        judge.drop(label)
        raise _Out(label, UNKNOWN)
    return found


def _object(obj: Obj, value: dict[str, Any], judge: Judge, depth: int) -> None:
    if obj.web_only is not None:
        if not judge.keeps(obj.web_only):
            raise _Out(obj.web_only, OFF)
        return
    for key in list(value):
        rule = obj.keys.get(key)
        if rule is None:
            judge.drop(f"unknown field `{key[:80]}` of a {obj.name}")
            del value[key]
        else:
            _value(rule, value[key], judge, depth)


# ---------------------------------------------------------------- models

def searches_every_call(model: str) -> bool:
    """The model searches or browses the web on every call, whatever tools the request offers."""
    return bool(_SEARCH_MODEL.search(model))


def model_refusal(model: str | None, *, web_access: bool) -> str | None:
    """Why the relay refuses `model` for this repository, or None."""
    if web_access or not model or not searches_every_call(model):
        return None
    return (f"the model relay refused the model {model[:120]!r}: it searches the web on every call, "
            f"and {OFF} (`web_access` in .github/bot.yml)")


# ---------------------------------------------------------------- building blocks

def typed(value: dict[str, Any]) -> str | None:
    """A member's name: its `type`."""
    kind = value.get("type")
    return kind if isinstance(kind, str) else None


def obj(name: str, *keys: str, **rules: Rule) -> Obj:
    """An object whose `keys` pass as they are and whose `rules` keys are read by their rule."""
    return Obj(name, {**dict.fromkeys(keys, PASS), **rules})


def kind(name: str, *keys: str, **rules: Rule) -> Obj:
    """A member of a union told apart by its `type`."""
    return obj(name, "type", *keys, **rules)


def web_only(name: str, what: str) -> Obj:
    return Obj(name, {}, web_only=what)


def both(keys: dict[str, Rule]) -> dict[str, Rule]:
    """Gemini's JSON takes each field in lowerCamelCase and in snake_case."""
    out: dict[str, Rule] = {}
    for key, rule in keys.items():
        out[key] = rule
        out[snake(key)] = rule
    return out


def snake(key: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), key)


HELD = Ref("a file the provider holds")


def text_part(kind_name: str) -> Callable[[str], dict[str, Any]]:
    """The stand-in for a removed part: a text part of this type saying what was removed."""
    return lambda note: {"type": kind_name, "text": note}


def provider_ran(*kinds: str) -> dict[str, Obj]:
    """Results of provider-run tools in the history: they pass only with web access."""
    return {k: web_only(k, f"the result of a provider-run tool (`{k}`)") for k in kinds}
