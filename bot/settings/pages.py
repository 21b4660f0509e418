"""Server-rendered HTML of the settings pages. Every interpolated value goes through `esc`."""
from __future__ import annotations

from collections.abc import Iterable
from html import escape

STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #d0d7de}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}input,select{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}
button,.button{font:inherit;padding:.4rem .9rem;border:1px solid #1f883d;background:#1f883d;color:#fff;border-radius:6px;text-decoration:none;cursor:pointer}
button.secondary{background:#f6f8fa;color:#1f2328;border-color:#d0d7de}
.notice{padding:.6rem 1rem;border-radius:6px;background:#ddf4ff}.error{background:#ffebe9}
code{background:#f6f8fa;padding:0 .2rem}td code{white-space:nowrap}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
"""


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def page(title: str, body: str, *, login: str | None = None, csrf: str | None = None) -> str:
    who = ""
    if login:
        who = (f'<form method="post" action="/settings/logout">{csrf_field(csrf)}'
               f'Signed in as <strong>{esc(login)}</strong> '
               f'<button class="secondary" type="submit">Sign out</button></form>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{esc(title)} · bot settings</title><style>{STYLE}</style></head><body>'
            f'<header><p><a href="/settings">Bot settings</a></p>{who}</header>'
            f'<main><h1>{esc(title)}</h1>{body}</main></body></html>')


def csrf_field(csrf: str | None) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(csrf or "")}">'


def notice(message: str | None, error: bool = False) -> str:
    if not message:
        return ""
    role = "alert" if error else "status"
    return f'<p class="notice{" error" if error else ""}" role="{role}">{esc(message)}</p>'


def not_configured(callback_url: str) -> str:
    body = (
        "<p>Login with GitHub is not configured on this bot, so no one can connect keys yet.</p>"
        "<p>The operator sets, in the bot's environment:</p><ul>"
        "<li><code>GITHUB_CLIENT_ID</code>: the GitHub App's <em>Client ID</em> (App settings → General; "
        "it is not the App ID)</li>"
        "<li><code>GITHUB_CLIENT_SECRET</code>: a client secret generated on the same page</li>"
        "<li><code>BOT_PUBLIC_URL</code>: the address people reach this bot at</li></ul>"
        f"<p>and adds <code>{esc(callback_url)}</code> to the App's <em>Callback URLs</em>.</p>")
    return page("Settings are not configured", body)


def login_page(message: str | None = None) -> str:
    body = (notice(message, error=bool(message)) +
            "<p>Connect your own API keys or subscriptions so the bot runs agents on your account "
            "when you ask it to. Keys are encrypted at rest and shown only by fingerprint.</p>"
            '<p><a class="button" href="/settings/login">Login with GitHub</a></p>')
    return page("Sign in", body)


def error_page(title: str, message: str, back: str = "/settings") -> str:
    return page(title, notice(message, error=True) + f'<p><a href="{esc(back)}">Back</a></p>')


def credential_table(caption: str, rows: Iterable[dict], delete_action: str, csrf: str) -> str:
    rows = list(rows)
    if not rows:
        return f"<p>{esc(caption)}: none connected.</p>"
    cells = "".join(
        f'<tr><td>{esc(r["agent"])}</td><td>{esc(r["label"])}</td><td><code>{esc(r["fingerprint"])}</code></td>'
        f'<td>{esc(r["updated_at"])} by {esc(r["updated_by"])}</td><td>'
        f'<form method="post" action="{esc(delete_action)}">{csrf_field(csrf)}'
        f'<input type="hidden" name="kind" value="{esc(r["name"])}">'
        f'<button class="secondary" type="submit" aria-label="Delete {esc(r["label"])} for {esc(r["agent"])}">'
        f"Delete</button></form></td></tr>" for r in rows)
    return (f"<table><caption>{esc(caption)}</caption><thead><tr><th scope=col>Agent</th>"
            f"<th scope=col>Credential</th><th scope=col>Fingerprint</th><th scope=col>Updated</th>"
            f"<th scope=col><span class=visually-hidden>Actions</span></th></tr></thead>"
            f"<tbody>{cells}</tbody></table>")


def add_form(action: str, kinds: Iterable, csrf: str, legend: str) -> str:
    options = "".join(f'<option value="{esc(k.name)}">{esc(k.agent)}: {esc(k.label)}</option>' for k in kinds)
    hints = "".join(f"<li><strong>{esc(k.agent)}: {esc(k.label)}</strong>. {esc(k.hint)}</li>" for k in kinds)
    return (f'<form method="post" action="{esc(action)}"><fieldset><legend>{esc(legend)}</legend>'
            f"{csrf_field(csrf)}<label for=kind>Credential</label>"
            f'<select id=kind name="kind" required>{options}</select>'
            f'<label for=value>Key, token or file content</label>'
            f'<input id=value name="value" type="password" autocomplete="off" spellcheck="false" required>'
            f'<p><button type="submit">Save</button></p></fieldset></form>'
            f"<details><summary>Where to find each credential</summary><ul>{hints}</ul></details>")


def home(login: str, csrf: str, personal: list[dict], kinds: list, repos: list[str],
         installations: list[dict], operator_agents: list[str], message: str | None = None,
         error: bool = False) -> str:
    repo_links = "".join(f'<li><a href="/settings/repos/{esc(r)}">{esc(r)}</a></li>' for r in repos)
    repos_html = (f"<ul>{repo_links}</ul>" if repos else
                  "<p>You are not an admin or maintainer of any repository this bot is installed on.</p>")
    install_links = "".join(f'<li><a href="/settings/installations/{esc(i["id"])}">{esc(i["account"])}</a> '
                            f'({esc(i["type"].lower() or "account")})</li>' for i in installations)
    body = (notice(message, error) +
            "<h2>Your keys and subscriptions</h2><p>Used when <em>you</em> ask the bot, on any repository.</p>" +
            fallback_note(operator_agents) +
            credential_table("Your credentials", personal, "/settings/keys/delete", csrf) +
            add_form("/settings/keys", kinds, csrf, "Connect a personal credential") +
            "<h2>Repositories you administer</h2><p>A repository key is used for anyone with write "
            "access who has not connected their own.</p>" + repos_html +
            ("<h2>Accounts you administer</h2><p>A key for a whole installation serves its repositories "
             f"that have no key of their own.</p><ul>{install_links}</ul>" if installations else ""))
    return page("Your settings", body, login=login, csrf=csrf)


def fallback_note(operator_agents: list[str]) -> str:
    if not operator_agents:
        return "<p>This bot has no key of its own: an agent runs only with a connected credential.</p>"
    return ("<p>Without a connected credential these agents run on the operator's own key: "
            f"{esc(', '.join(operator_agents))}.</p>")


def shared_page(title: str, blurb: str, base: str, login: str, csrf: str, rows: list[dict], kinds: list,
                history: list[dict], message: str | None = None, error: bool = False) -> str:
    """A repository's or an installation's credentials, and who changed them."""
    body = (notice(message, error) + f"<p>{esc(blurb)}</p>" +
            credential_table(f"Credentials of {title}", rows, f"{base}/keys/delete", csrf) +
            add_form(f"{base}/keys", kinds, csrf, f"Connect a credential for {title}") +
            history_table(history))
    return page(title, body, login=login, csrf=csrf)


def history_table(history: list[dict]) -> str:
    if not history:
        return ""
    cells = "".join(f"<tr><td>{esc(h['at'])}</td><td>{esc(h['actor'])}</td><td>{esc(h['action'])}</td>"
                    f"<td>{esc(h['label'])}</td><td><code>{esc(h['fingerprint'])}</code></td></tr>"
                    for h in history)
    return ("<h2>History</h2><table><caption>Recent changes</caption><thead><tr><th scope=col>When</th>"
            "<th scope=col>Who</th><th scope=col>Change</th><th scope=col>Credential</th>"
            f"<th scope=col>Fingerprint</th></tr></thead><tbody>{cells}</tbody></table>")
