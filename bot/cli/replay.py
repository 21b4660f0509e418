"""`bot replay FILE [--url URL] [--event EVENT] [--same-id]`: post a webhook delivery saved from the
GitHub App's "Recent deliveries" page to a running service, signed as GitHub signs it.

The file holds the delivery's request headers (`X-GitHub-Event: issue_comment` and the rest, one
a line), a blank line, then the JSON payload; or the JSON payload alone with `--event`. The HMAC
key is GITHUB_WEBHOOK_SECRET from the environment (or the App a first run stored in
BOT_DATA_DIR), never an argument. Each replay gets a fresh X-GitHub-Delivery unless `--same-id`,
so the service does not take it for the delivery it already saw (it still dedupes by the
triggering comment). Exit 0 when the service answered 2xx, 1 otherwise, 2 for a bad file."""
from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import sys
import uuid
from pathlib import Path

import httpx

from bot import config
from bot.cli.replay_file import ReplayFileError, SavedDelivery, parse
from bot.config import Settings
from bot.settings import manifest

TIMEOUT_S = 30
SHOWN_ANSWER = 500  # characters of the service's answer printed


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        saved = parse(Path(args.file).read_text(encoding="utf-8"))
        headers = request_headers(saved, args.event, args.same_id)
    except (OSError, UnicodeDecodeError, ReplayFileError) as exc:
        print(f"bot replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    try:
        # unchecked: a client of the service needs its webhook secret, not the rest of an App
        settings = manifest.with_stored_app(Settings(dict(os.environ)))  # a first run's stored App has it
        secret = settings.required("GITHUB_WEBHOOK_SECRET", "Set it to the App's webhook secret.")
    except config.MissingConfig as exc:
        print(f"bot replay: {exc}", file=sys.stderr)
        return 2
    headers["x-hub-signature-256"] = signature(secret, saved.body)
    return post(webhook_url(settings, args.url), saved.body, headers)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bot replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="the saved delivery: headers, a blank line, the JSON payload")
    parser.add_argument("--url", help="the service (default BOT_PUBLIC_URL, else http://127.0.0.1:BOT_PORT); "
                                      "/webhook is added to a URL without a path")
    parser.add_argument("--event", help="the X-GitHub-Event of a file that holds only the payload")
    parser.add_argument("--same-id", action="store_true", help="send the saved X-GitHub-Delivery, not a fresh one")
    return parser


def request_headers(saved: SavedDelivery, event: str | None, same_id: bool) -> dict[str, str]:
    """GitHub's headers as saved, the event and the delivery id decided; raises ReplayFileError."""
    headers = dict(saved.headers)
    headers["x-github-event"] = event or saved.event or ""
    if not headers["x-github-event"]:
        raise ReplayFileError("no X-GitHub-Event header: name the event with --event (e.g. --event issue_comment)")
    if same_id and not saved.delivery_id:
        raise ReplayFileError("--same-id needs an X-GitHub-Delivery header in the file")
    headers["x-github-delivery"] = saved.delivery_id if same_id and saved.delivery_id else str(uuid.uuid4())
    headers.setdefault("user-agent", "GitHub-Hookshot/replay")
    headers["content-type"] = "application/json"
    return headers


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_url(settings: Settings, url: str | None) -> str:
    base = url or settings.text("BOT_PUBLIC_URL") or _listening_url(settings)
    return base if httpx.URL(base).path not in ("", "/") else base.rstrip("/") + "/webhook"


def _listening_url(settings: Settings) -> str:
    host = settings.word("BOT_HOST")
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.whole('BOT_PORT')}"


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    what = f"{headers['x-github-event']}, delivery {headers['x-github-delivery']}"
    try:
        response = httpx.post(url, content=body, headers=headers, timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        print(f"bot replay: POST {url} ({what}): {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"POST {url} ({what}): {response.status_code} {response.text[:SHOWN_ANSWER]}")
    return 0 if response.is_success else 1
