"""Configuration from the environment, read when asked for, never at import."""
from __future__ import annotations

import os
from pathlib import Path

AGENTS = ("claude", "codex", "opencode", "gemini")
PROJECT_ROOT = Path(__file__).resolve().parent.parent


class MissingConfig(RuntimeError):
    """A required variable is not set; the message names it and how to set it."""


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def require(name: str, hint: str = "") -> str:
    value = env(name)
    if value is None:
        raise MissingConfig(f"{name} is not set." + (f" {hint}" if hint else ""))
    return value


def data_dir() -> Path:
    path = Path(env("BOT_DATA_DIR", "./.bot-data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def handle() -> str:
    return env("BOT_HANDLE", "bot").lstrip("@")


def github_api_url() -> str:
    return env("GITHUB_API_URL", "https://api.github.com").rstrip("/")


def git_base_url() -> str:
    return env("BOT_GIT_BASE_URL", "https://github.com").rstrip("/")


def clone_url(full_name: str) -> str:
    return f"{git_base_url()}/{full_name}.git"


def default_agent() -> str:
    return env("BOT_DEFAULT_AGENT", "claude")


def workers() -> int:
    return int(env("BOT_WORKERS", "2"))


def sandbox_tier() -> int:
    return int(env("BOT_SANDBOX_TIER", "1"))


def agents_dir() -> Path:
    """Where `make agents` installs the pinned CLIs (node_modules/.bin inside)."""
    return Path(env("BOT_AGENTS_DIR", str(PROJECT_ROOT / "agents-cli")))


def agent_bin(agent: str, default_name: str) -> str:
    """The CLI's path: BOT_<AGENT>_BIN, else the project-local install, else the bare name."""
    override = env(f"BOT_{agent.upper()}_BIN")
    if override:
        return override
    local = agents_dir() / "node_modules" / ".bin" / default_name
    return str(local) if local.exists() else default_name


def agent_base_url(agent: str) -> str | None:
    return env(f"BOT_{agent.upper()}_BASE_URL")


def agent_model(agent: str) -> str | None:
    return env(f"BOT_{agent.upper()}_MODEL")


def webhook_secret() -> str:
    return require("GITHUB_WEBHOOK_SECRET", "Set it to the webhook secret of your GitHub App.")


def app_id() -> str:
    return require("GITHUB_APP_ID", "Set it to your GitHub App's numeric id (App settings → About).")


def private_key() -> str:
    inline = env("GITHUB_PRIVATE_KEY")
    if inline:
        return inline.replace("\\n", "\n")
    path = env("GITHUB_PRIVATE_KEY_PATH")
    if path:
        return Path(path).read_text()
    raise MissingConfig(
        "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is not set. "
        "Generate a private key in your GitHub App's settings and point GITHUB_PRIVATE_KEY_PATH at the .pem file.")


def missing_app_config() -> list[str]:
    """What a service needs before it can act on webhooks, as human sentences."""
    problems = []
    for check in (webhook_secret, app_id, private_key):
        try:
            check()
        except (MissingConfig, OSError) as exc:
            problems.append(str(exc))
    return problems
