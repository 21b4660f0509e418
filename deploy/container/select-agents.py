"""Keep only the chosen agent CLIs in agents-cli/package.json (the image's AGENTS build argument).

`python3 select-agents.py package.json "claude codex"`: every other pinned CLI is dropped from the
dependencies, so `npm install` with the unchanged package-lock.json installs the chosen ones at
their locked versions and nothing else. `all` keeps the four CLIs. An unknown name is an error."""
from __future__ import annotations

import json
import sys
from pathlib import Path

# Each adapter's `npm_package`, copied: this runs before the bot's source is in the image (so a code
# change reuses the npm layer); tests/deploy/test_container_recipe.py fails when the two disagree.
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "opencode": "opencode-ai",
            "gemini": "@google/gemini-cli"}


def select(manifest: dict, chosen: list[str]) -> dict:
    unknown = sorted(set(chosen) - set(PACKAGES) - {"all"})
    if unknown or not chosen:
        raise SystemExit(f"AGENTS={' '.join(chosen)!r}: choose from all, {', '.join(PACKAGES)}")
    wanted = set(PACKAGES.values()) if "all" in chosen else {PACKAGES[name] for name in chosen}
    kept = {name: pin for name, pin in manifest["dependencies"].items() if name in wanted}
    return {**manifest, "dependencies": kept}


def main(argv: list[str]) -> int:
    path, chosen = Path(argv[0]), argv[1].replace(",", " ").split()
    path.write_text(json.dumps(select(json.loads(path.read_text()), chosen), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
