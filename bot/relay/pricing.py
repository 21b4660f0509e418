"""List prices of model calls, from a versioned data file (bot/relay/prices.json, with its date).

The operator can merge a table of the same shape over it (BOT_RELAY_PRICES, a file path, read from
the settings `load_table` is handed): their models are added or replace the built-in ones (a
gateway's own model names, negotiated prices). The table is the relay's list of models: a metered
call of a model it does not know is refused (`unpriced`), so no call escapes the money caps. A price
is never guessed from a similar name: `claude-opus-4-8` and `claude-opus-4-1` differ threefold.

Lookup: each name the call's API looks its models up by (its record's `price_names`,
bot/relay/wire_api.py: a dated snapshot as its model, a resource name as the model's own), and
each of those through the table's `aliases`. Without an API, the exact name only.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.relay.usage import CallUsage
from bot.relay.wire_api import WireApi, exact

if TYPE_CHECKING:
    from bot.config import Settings

_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,79}")  # a name worth repeating in an answer
MILLION = 1_000_000


class PriceTableError(BotError, ValueError):
    """The operator's price file cannot be read as a price table; the message says why."""


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached: float | None = None
    cache_write: float | None = None  # the shorter retention: Anthropic's five minutes, OpenAI's 30
    cache_write_long: float | None = None  # the longer: Anthropic's one hour, OpenAI's 12 hours

    def cost(self, usage: CallUsage) -> float:
        short_write = _or(self.cache_write, self.input)
        long_writes = min(usage.long_cache_write_tokens, usage.cache_write_tokens)
        per_token = (usage.input_tokens * self.input + usage.output_tokens * self.output
                     + usage.cached_tokens * _or(self.cached, self.input)
                     + (usage.cache_write_tokens - long_writes) * short_write
                     + long_writes * _or(self.cache_write_long, short_write))
        return round(per_token / MILLION, 8)


def _or(value: float | None, fallback: float) -> float:
    return fallback if value is None else value


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Price]
    aliases: dict[str, str]
    version: str  # "<built-in date>" or "<built-in date> + <operator file date>"

    def price(self, model: str | None, api: WireApi | None = None) -> Price | None:
        """The price of `model` called through `api` (whose record says how its models are named
        in the table), or None: unpriced."""
        if not model:
            return None
        names: Callable[[str], tuple[str, ...]] = api.price_names if api is not None else exact
        for candidate in names(model):
            found = self.models.get(candidate) or self.models.get(self.aliases.get(candidate, ""))
            if found:
                return found
        return None

    def cost(self, model: str | None, usage: CallUsage, api: WireApi | None = None) -> float | None:
        """USD at list price, or None: unpriced."""
        price = self.price(model, api)
        return None if price is None else price.cost(usage)


def _parse(data: object, origin: str) -> tuple[dict[str, Price], dict[str, str], str]:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PriceTableError(f"{origin}: expected an object with a \"models\" object")
    models = {}
    for name, entry in data["models"].items():
        try:
            models[name] = Price(**{k: float(v) for k, v in entry.items() if k in Price.__dataclass_fields__})
        except (TypeError, ValueError, AttributeError):
            raise PriceTableError(f"{origin}: model {name!r} needs numeric input and output prices") from None
        if min(filter(lambda v: v is not None, vars(models[name]).values())) < 0:
            raise PriceTableError(f"{origin}: model {name!r} has a negative price")
    aliases = {str(k): str(v) for k, v in (data.get("aliases") or {}).items()}
    return models, aliases, str(data.get("date") or data.get("version") or "undated")


def builtin_table() -> PriceTable:
    text = resources.files("bot.relay").joinpath("prices.json").read_text()
    models, aliases, date = _parse(json.loads(text), "bot/relay/prices.json")
    return PriceTable(models, aliases, date)


def load_table(settings: Settings) -> PriceTable:
    """The built-in table with the operator's file (the settings' BOT_RELAY_PRICES) merged over it."""
    table = builtin_table()
    path = settings.text("BOT_RELAY_PRICES")
    if not path:
        return table
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise PriceTableError(f"BOT_RELAY_PRICES={path}: {exc}") from None
    models, aliases, date = _parse(data, f"BOT_RELAY_PRICES={path}")
    return PriceTable(table.models | models, table.aliases | aliases, f"{table.version} + {date}")


def unpriced(model: str | None, table: PriceTable) -> str:
    """Why a call of `model` is refused: the table cannot price it, and how the operator can."""
    named = f"the model {model}" if model and _MODEL_ID.fullmatch(model) else (
        "a model with an unlisted name" if model else "a call that names no model")
    return (f"the model relay refused {named}: it has no price in the relay's price table ({table.version}), "
            "so its spend could not be held to the budgets; the operator can price it in the file "
            "BOT_RELAY_PRICES names (the shape of bot/relay/prices.json)")
