"""`bot doctor`'s wire API section, read from the records (bot/relay/wire_api.py): each API the model
relay speaks, its providers, paths and whether the settings page can test a key of it; and each
agent's relay channel whose provider no record declares (its runs would be refused: failed).
"""
from __future__ import annotations

from adapters import base as adapters
from bot.config import Settings
from bot.relay import wire_api
from bot.relay.wire_api import ModelPath, Path, WireApi


def wire_api_section(settings: Settings) -> dict:
    rows = [_api_row(api) for api in wire_api.records()] + _unserved_rows()
    return {"section": "wire APIs", "ok": all(row["ok"] for row in rows), "rows": rows}


def _api_row(api: WireApi) -> dict:
    paths = ", ".join(_path(path) for path in api.paths) or "none (nothing is forwarded)"
    tested = "key test: yes" if api.key_test is not None else "key test: none"
    return {"check": f"{api.title or api.name} ({api.name})", "ok": True,
            "detail": f"providers: {', '.join(api.providers) or 'none'}; {paths}; {tested}"}


def _path(path: Path | ModelPath) -> str:
    if isinstance(path, Path):
        return f"{path.method} {path.path.decode('ascii', 'replace')}"
    return f"{path.method} {path.shown or path.pattern.pattern.decode('ascii', 'replace')}"


def _unserved_rows() -> list[dict]:
    declared = {provider for api in wire_api.records() for provider in api.providers}
    return [{"check": f"{name}'s relay channel {channel.variable}", "ok": False,
             "detail": f"names the provider {channel.provider}, which no wire API declares: its runs are refused"}
            for name in adapters.names() for channel in adapters.get(name).relay_channels
            if channel.provider not in declared]
