"""Installs the sixth wire API and its agent for a subprocess as one package would: a `*.dist-info`
folder whose entry_points.txt names the record under `bot.wire_apis` and the adapter under
`bot.adapters`, on PYTHONPATH, and the CLI stand-in where the bot finds pinned CLIs (BOT_AGENTS_DIR's
node_modules/.bin). The model's price goes in an operator price file (BOT_RELAY_PRICES)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapters.base import PLUGIN_GROUP as AGENTS
from bot.relay.wire_api import PLUGIN_GROUP as WIRE_APIS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PRICES = {"version": 1, "date": "2026-12-07", "models": {"sixth-small": {"input": 1.0, "output": 2.0}}}


def install(base: Path) -> dict[str, str]:
    """The environment additions that make `sixth` a wire API and an agent of a `bot` subprocess."""
    site = base / "site"
    info = site / "sixth_api-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sixth-api\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text(f"[{WIRE_APIS}]\nsixth = tests.relay.sixth.api:WIRE_API\n\n"
                                           f"[{AGENTS}]\nsixth = tests.relay.sixth.agent:Sixth\n")
    bin_dir = base / "agents" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    shutil.copy2(HERE / "sixth_cli.py", bin_dir / "sixth")
    prices = base / "prices.json"
    prices.write_text(json.dumps(PRICES))
    return {"PYTHONPATH": f"{site}:{ROOT}", "BOT_AGENTS_DIR": str(base / "agents"), "BOT_RELAY_PRICES": str(prices)}
