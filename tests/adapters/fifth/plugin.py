"""Installs the fifth agent for a subprocess as a package would: a `*.dist-info` folder whose
entry_points.txt names tests.adapters.fifth.agent:Fifth under `bot.adapters`, on PYTHONPATH, and the
CLI stand-in where the bot finds pinned CLIs (BOT_AGENTS_DIR's node_modules/.bin)."""
from __future__ import annotations

import shutil
from pathlib import Path

from adapters.base import PLUGIN_GROUP

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def install(base: Path) -> dict[str, str]:
    """The environment additions that make `fifth` an agent of a `bot` subprocess."""
    site = base / "site"
    info = site / "fifth_agent-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fifth-agent\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\nfifth = tests.adapters.fifth.agent:Fifth\n")
    bin_dir = base / "agents" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    shutil.copy2(HERE / "fifth_cli.py", bin_dir / "fifth")
    return {"PYTHONPATH": f"{site}:{ROOT}", "BOT_AGENTS_DIR": str(base / "agents")}
