"""First run: create the GitHub App from a manifest instead of copying seven values by hand.

GitHub's App manifest flow (docs.github.com, "Registering a GitHub App from a manifest"): the
browser POSTs a `manifest` (name, webhook URL, callback URLs, permissions, events) to
`<github>/settings/apps/new` (or `/organizations/<org>/settings/apps/new`) with a `state`; the
person confirms on GitHub, which redirects to our `redirect_url` with a one-hour `code`; we trade it
at `POST /app-manifests/{code}/conversions` for the App's id, private key (pem), webhook secret and
OAuth client id and secret.

Those are sealed with the secret store's master key (AES-GCM, bot/credentials/vault.py) into
`$BOT_DATA_DIR/github-app.sealed` (mode 0600). `load_settings` is how an entry point reads its
settings: the environment, and this App while the environment names none of the App's variables:
the App's identity comes whole from the environment or whole from here, never field by field. A
stored App is never overwritten: to start over, the operator removes the file.
"""
from __future__ import annotations

import json
import os
import secrets as random_tokens
from collections.abc import Mapping
from pathlib import Path

import httpx

from bot.config import Settings, StoredApp
from bot.config import stored_app as stored_app_file
from bot.credentials import vault as secrets
from bot.errors import BotError
from bot.settings import unreachable

FILE, CONTEXT = stored_app_file.FILE, stored_app_file.CONTEXT
# variable -> field of GitHub's conversion answer
SETTINGS = {"GITHUB_APP_ID": "id", "GITHUB_PRIVATE_KEY": "pem", "GITHUB_WEBHOOK_SECRET": "webhook_secret",
            "GITHUB_CLIENT_ID": "client_id", "GITHUB_CLIENT_SECRET": "client_secret", "BOT_HANDLE": "slug"}
PERMISSIONS = {"issues": "write", "pull_requests": "write", "contents": "write", "metadata": "read",
               "checks": "write", "actions": "read", "members": "read",
               "vulnerability_alerts": "read", "security_events": "read"}  # the last two: alerts' automations
EVENTS = ["issue_comment", "pull_request_review_comment", "pull_request_review", "issues", "pull_request",
          "check_suite", "workflow_run",  # these two: the automations' autofix (docs/automations.md)
          "dependabot_alert", "code_scanning_alert",  # automations on alerts
          "push"]  # .github/bot.yml read again when a push changes it on the default branch
CALLBACK_PATH = "/setup/github-app/callback"


class ManifestFailed(BotError):
    """GitHub did not turn the manifest code into an App (expired, used, or unreachable)."""


class AlreadyStored(BotError):
    """An App is stored already; a second one never replaces it."""


def manifest(public_url: str, name: str) -> dict:
    """What GitHub pre-fills on its "Create GitHub App" page."""
    base = public_url.rstrip("/")
    return {"name": name, "url": base, "description": "Runs coding-agent CLIs on @mentions, in a sandbox.",
            "hook_attributes": {"url": f"{base}/webhook", "active": True},
            "redirect_url": f"{base}{CALLBACK_PATH}", "callback_urls": [f"{base}/settings/callback"],
            "public": False, "default_permissions": dict(PERMISSIONS), "default_events": list(EVENTS),
            "request_oauth_on_install": False}


def suggested_name(handle: str) -> str:
    return f"{handle}-{random_tokens.token_hex(3)}"


def github_form_action(oauth_url: str, state: str, organization: str | None = None) -> str:
    """Where the browser posts the manifest: a personal account's or an organisation's new-App page."""
    web = oauth_url
    where = f"/organizations/{organization}" if organization else ""
    return f"{web}{where}/settings/apps/new?state={state}"


async def convert(github_api_url: str, code: str) -> dict:
    """GitHub's App for a manifest code: id, slug, pem, webhook_secret, client_id, client_secret…"""
    url = f"{github_api_url}/app-manifests/{code}/conversions"
    headers = {"Accept": "application/vnd.github+json", "User-Agent": "github-agent-bot"}
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            response = await client.post(url, headers=headers)
    except httpx.HTTPError as exc:
        raise ManifestFailed(f"GitHub could not be reached to finish creating the App: "
                             f"{unreachable.reason(exc)}. Start again.") from None
    if response.status_code != 201:
        raise ManifestFailed(f"GitHub did not accept the App's code (HTTP {response.status_code}): it is "
                             "valid for one hour and only once. Start again.")
    app = response.json()
    missing = [field for field in SETTINGS.values() if not app.get(field)]
    if missing:
        raise ManifestFailed(f"GitHub's answer lacks {', '.join(missing)}; start again.")
    return app


def store(app: dict, settings: Settings) -> None:
    """Seal the App's settings into the data dir of `settings` (0600, with their key), complete or
    not at all, and only where no App is stored: the link fails when the file exists, so two
    finishing setups cannot both win."""
    kept = {variable: str(app[field]) for variable, field in SETTINGS.items()}
    kept["html_url"] = str(app.get("html_url") or "")
    sealed = secrets.seal(CONTEXT, json.dumps(kept).encode(), settings)
    path = settings.data_dir / FILE
    temporary = path.with_suffix(f".{random_tokens.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(sealed)
        os.link(temporary, path)
    except FileExistsError:
        raise AlreadyStored("A GitHub App is stored already; it is kept.") from None
    finally:
        temporary.unlink(missing_ok=True)


def stored(data_dir: Path, secret_key: str | None = None) -> dict[str, str] | None:
    """The stored App settings, or None. Looking creates no data dir. `secret_key`: BOT_SECRET_KEY
    (None: the data dir's secret.key)."""
    return stored_app_file.read(data_dir, secret_key)


def stored_app(settings: Settings) -> StoredApp | None:
    """The App stored in the settings' data dir, or None. Not `settings.data_dir`: looking for the
    file must not create the data dir."""
    found = stored(settings.path("BOT_DATA_DIR").resolve(), settings.text("BOT_SECRET_KEY"))
    return StoredApp.of(found) if found else None


def load_settings(environ: Mapping[str, str]) -> Settings:
    """An entry point's settings: `environ`, refused as `Settings.load` refuses, with the stored
    App while `environ` names none of the App's variables."""
    return with_stored_app(Settings.load(environ))


def with_stored_app(settings: Settings) -> Settings:
    """`settings` with the stored App while they name none of the App's variables."""
    return settings if settings.identity_source == "environment" else settings.with_stored_app(stored_app(settings))
