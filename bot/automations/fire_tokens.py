"""The per-automation tokens that fire an automation over HTTP (`POST /automations/OWNER/REPO/NAME`,
bot/web/fire_route.py): one per (repository, automation), made or rotated by a maintainer on the
repository's settings page (or by the operator, `bot automations token`), shown once and stored
only as its SHA-256 digest (migration 16). A token names its repository and automation: the row is
found by them, never by the token, and the digest is compared in constant time.

    token = issue(db, "o/r", "nightly", repo_id=7, installation_id=9, by="alice")   # shown once
    row = check(db, "o/r", "nightly", presented)   # the token's row, or None (wrong, revoked, none)
    revoke(db, "o/r", "nightly")                   # True when there was one

The token is 32 random bytes (`bota_` and 43 URL-safe characters): a plain digest is enough, since
nothing short of the token itself hashes to it; a leaked database fires nothing.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from bot.db import Database

PREFIX = "bota_"
SHAPE = re.compile(r"^bota_[A-Za-z0-9_-]{43}$")  # what `issue` makes; anything else is no token
_NO_DIGEST = hashlib.sha256(b"no token is stored here").hexdigest()  # compared against when no row exists


@dataclass(frozen=True)
class TokenRow:
    repo: str
    automation: str
    repo_id: int | None
    installation_id: int | None
    created_by: str
    created_at: float


def issue(db: Database, repo: str, automation: str, *, repo_id: int | None, installation_id: int | None,
          by: str) -> str:
    """A new token for the automation, replacing its previous one (which stops working now)."""
    token = PREFIX + secrets.token_urlsafe(32)
    db.execute("INSERT INTO automation_tokens (repo, automation, digest, repo_id, installation_id, created_by, "
               "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, automation) DO UPDATE SET "
               "digest = excluded.digest, repo_id = excluded.repo_id, installation_id = excluded.installation_id, "
               "created_by = excluded.created_by, created_at = excluded.created_at",
               [repo, automation, digest(token), repo_id, installation_id, by, time.time()])
    return token


def check(db: Database, repo: str, automation: str, presented: str) -> TokenRow | None:
    """The token's row when `presented` is the automation's token; the same work either way (a
    digest and one constant-time compare), so a wrong, revoked or unknown one learns nothing."""
    rows = db.query("SELECT repo, automation, digest, repo_id, installation_id, created_by, created_at "
                    "FROM automation_tokens WHERE repo = ? AND automation = ?", [repo, automation])
    stored = str(rows[0]["digest"]) if rows else _NO_DIGEST
    matches = hmac.compare_digest(digest(presented).encode(), stored.encode())
    if not (rows and matches and SHAPE.match(presented)):
        return None
    row = rows[0]
    return TokenRow(str(row["repo"]), str(row["automation"]), row["repo_id"], row["installation_id"],
                    str(row["created_by"]), float(row["created_at"]))


def revoke(db: Database, repo: str, automation: str) -> bool:
    return bool(db.execute("DELETE FROM automation_tokens WHERE repo = ? AND automation = ?",
                           [repo, automation]).rowcount)


def listed(db: Database, repo: str) -> dict[str, TokenRow]:
    """The repository's tokens (who made each, when), by automation: never a token."""
    rows = db.query("SELECT repo, automation, repo_id, installation_id, created_by, created_at "
                    "FROM automation_tokens WHERE repo = ? ORDER BY automation LIMIT 200", [repo])
    return {str(r["automation"]): TokenRow(str(r["repo"]), str(r["automation"]), r["repo_id"],
                                           r["installation_id"], str(r["created_by"]), float(r["created_at"]))
            for r in rows}


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
