"""Which installation of the App holds a repository, as the signed-in user can see it.

A repository page shows what the next run there uses; a run resolves the installation's key by the
installation id of its webhook, which is the id GitHub lists here."""
from __future__ import annotations

from bot.settings import github


async def installation_of(api: str, token: str, repo: str) -> dict | None:
    """{"id", "account"} of the installation whose repositories include `repo`, else None; `api`:
    GitHub's REST API."""
    wanted = repo.lower()
    for installation in await github._pages(api, token, "/user/installations", "installations"):
        path = f"/user/installations/{installation['id']}/repositories"
        repositories = await github._pages(api, token, path, "repositories")
        if any(r.get("full_name", "").lower() == wanted for r in repositories):
            return {"id": int(installation["id"]), "account": (installation.get("account") or {}).get("login", "")}
    return None
