"""Configuration is read at the edge: only an entry point builds the settings (from the environment
and the stored App), and the modules below it receive the settings or the values they need. The
environment readers config once had at module level are gone, and none may come back."""
from __future__ import annotations

import ast

from tests.architecture.imports import parsed, project_modules

# The entry points: every command of the CLI, and the web app factory (`bot serve`'s app, which
# tests start on their own). bot.settings.manifest.load_settings is how they read the stored App.
ENTRY_POINTS = ("bot.cli.", "bot.web.app", "bot.settings.manifest")
BUILDERS = {"Settings", "Settings.load", "config.Settings", "config.Settings.load", "manifest.load_settings",
            "load_settings"}
# config's module-level readers of the live environment (bot/config/__init__.py, at its end)
READERS = {"env", "is_set", "value", "text", "require", "data_dir", "handle", "github_api_url", "server_url",
           "git_base_url", "oauth_url", "run_url", "clone_url", "default_agent", "workers", "sandbox_tier",
           "agents_dir", "agent_bin", "agent_base_url", "agent_model", "provider_credential", "operator_for",
           "sandbox_host", "webhook_secret", "app_id", "private_key"}


def _calls(module: str) -> list[ast.Call]:
    tree = parsed(project_modules()[module])
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def builds_settings(module: str) -> bool:
    return any(ast.unparse(call.func) in BUILDERS for call in _calls(module))


def _names_of_config(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names the module binds to bot.config (`from bot import config as c`, `import bot.config`),
    and the readers it imports by name (`from bot.config import env`)."""
    modules, readers = {"bot.config"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "bot":
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "config"}
        elif isinstance(node, ast.ImportFrom) and node.module == "bot.config":
            readers |= {alias.asname or alias.name for alias in node.names if alias.name in READERS}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname for alias in node.names if alias.name == "bot.config" and alias.asname}
    return modules, readers


def reads_the_environment(module: str) -> bool:
    """Whether the module calls one of config's environment readers (`config.env(...)`, …)."""
    tree = parsed(project_modules()[module])
    modules, readers = _names_of_config(tree)
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        if isinstance(call.func, ast.Attribute) and call.func.attr in READERS and ast.unparse(call.func.value) in modules:
            return True
        if isinstance(call.func, ast.Name) and call.func.id in readers:
            return True
    return False


def _below_the_edge() -> list[str]:
    return sorted(m for m in project_modules() if m not in ("bot.config", "bot.config.table"))


def test_only_entry_points_build_the_settings():
    builders = [m for m in _below_the_edge() if builds_settings(m)]
    assert [m for m in builders if not m.startswith(ENTRY_POINTS)] == []


def test_no_module_reads_the_environment_through_config():
    assert [m for m in _below_the_edge() if reads_the_environment(m)] == []


def test_config_has_no_reader_of_the_live_environment():
    import bot.config  # noqa: PLC0415

    assert sorted(name for name in READERS if hasattr(bot.config, name)) == []
