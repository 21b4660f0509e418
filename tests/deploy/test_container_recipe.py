"""The Containerfile's AGENTS build argument (deploy/container/select-agents.py) and the entrypoint
that turns mounted secret files into variables (deploy/container/entrypoint.sh)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from adapters import base
from tests.relay.test_fail_closed import Fifth

ROOT = Path(__file__).resolve().parents[2]
CONTAINER = ROOT / "deploy" / "container"


def selector() -> ModuleType:
    spec = importlib.util.spec_from_file_location("select_agents", CONTAINER / "select-agents.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pinned() -> dict:
    loaded: dict = json.loads((ROOT / "agents-cli" / "package.json").read_text())
    return loaded


def test_agents_keeps_only_the_chosen_clis_at_their_pinned_versions() -> None:
    kept = selector().select(pinned(), ["claude", "codex"])["dependencies"]
    assert kept == {name: pin for name, pin in pinned()["dependencies"].items()
                    if name in ("@anthropic-ai/claude-code", "@openai/codex")}


def test_agents_all_keeps_the_four_clis_and_not_the_benchmarks_sandbox_runtime() -> None:
    kept = selector().select(pinned(), ["all"])["dependencies"]
    assert set(kept) == set(selector().PACKAGES.values())


def test_agents_refuses_an_unknown_name() -> None:
    with pytest.raises(SystemExit, match="choose from"):
        selector().select(pinned(), ["claude", "copilot"])


def test_every_selectable_agent_is_pinned_in_agents_cli() -> None:
    assert set(selector().PACKAGES.values()) <= set(pinned()["dependencies"])


def test_the_entrypoint_turns_secret_files_into_variables_the_environment_does_not_set(tmp_path: Path) -> None:
    secrets, bin_dir = tmp_path / "secrets", tmp_path / "bin"
    secrets.mkdir()
    bin_dir.mkdir()
    (secrets / "GITHUB_WEBHOOK_SECRET").write_text("from-the-file\n")
    (secrets / "BOT_SECRET_KEY").write_text("file-key")
    (secrets / "github-app.pem").write_text("not a variable")
    (bin_dir / "bot").write_text('#!/bin/sh\nprintf "%s|%s|%s|%s" "$GITHUB_WEBHOOK_SECRET" "$BOT_SECRET_KEY" "$*" '
                                 '"$(env | grep -c "^github-app")"\n')
    (bin_dir / "bot").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SECRETS_DIR": str(secrets), "BOT_SECRET_KEY": "env-key"}
    done = subprocess.run(["sh", str(CONTAINER / "entrypoint.sh"), "worker"], env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout == "from-the-file|env-key|worker|0"
    assert os.access(CONTAINER / "entrypoint.sh", os.X_OK)


def unselectable() -> dict[str, tuple[str, str]]:
    """Where the image's selection and the adapters disagree: agent -> (selected, declared) package.
    select-agents.py runs before the bot's source is in the image (so a code change reuses the npm
    layer), so it keeps its own table and this check ties the two together."""
    declared = {name: base.get(name).npm_package for name in base.names() if base.get(name).npm_package}
    selected: dict[str, str] = selector().PACKAGES
    return {name: (selected.get(name, ""), declared.get(name, ""))
            for name in set(selected) | set(declared) if selected.get(name) != declared.get(name)}


def test_the_image_selects_exactly_the_agents_the_adapters_install_from_npm() -> None:
    assert unselectable() == {}


def test_an_adapter_the_image_cannot_select_is_named(monkeypatch) -> None:
    class Sixth(Fifth):
        name = "sixth"
        npm_package = "sixth-cli"

    monkeypatch.setitem(base._REGISTRY, "sixth", Sixth)
    assert unselectable() == {"sixth": ("", "sixth-cli")}
