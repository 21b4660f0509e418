"""Server-rendered HTML of the settings pages and `/`. Every interpolated value goes through `esc`.

One layout (`page`) for every page, errors included: the header links back to `/` and the
settings, and shows who is signed in. At 390 px the tables become stacked cards (each cell
labelled by its column) and long values wrap, so nothing scrolls sideways.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

STYLE = """
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:0 1rem 2rem;color:#1f2328}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;justify-content:space-between;align-items:center;
border-bottom:1px solid #d0d7de;padding:.6rem 0}
header nav a{margin-right:1rem}header form{margin:0}
a{color:#0969da}h1{font-size:1.6rem;margin:1rem 0 .4rem;overflow-wrap:anywhere}h2{font-size:1.25rem;margin-top:1.8rem}
.crumbs{margin:.2rem 0 1rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem}
table{border-collapse:collapse;width:100%;margin:1rem 0}caption{text-align:left;font-weight:600}
th,td{text-align:left;padding:.4rem;border-bottom:1px solid #d0d7de;vertical-align:top;overflow-wrap:break-word}
td form{display:inline-block;margin:0 .3rem .3rem 0}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}
input,select{font:inherit;padding:.3rem;width:100%;max-width:100%}
button,.button{font:inherit;padding:.4rem .9rem;border:1px solid #1f883d;background:#1f883d;color:#fff;
border-radius:6px;text-decoration:none;cursor:pointer;display:inline-block}
button.secondary,.button.secondary{background:#f6f8fa;color:#1f2328;border-color:#d0d7de}
button.danger{background:#f6f8fa;color:#cf222e;border-color:#d0d7de}
fieldset{border:1px solid #d0d7de;border-radius:6px;min-width:0}
.notice{padding:.6rem 1rem;border-radius:6px;background:#ddf4ff;overflow-wrap:anywhere}.error{background:#ffebe9}
.ok{color:#1a7f37}.bad{color:#cf222e}.muted{color:#59636e}
.field-error{color:#cf222e;margin:.2rem 0}
code{background:#f6f8fa;padding:0 .2rem;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.6rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
@media (min-width:40.01rem){td code{white-space:nowrap}td form,td .button{margin:0 .3rem .3rem 0}}
@media (max-width:40rem){
 table,thead,tbody,tr,th,td,caption{display:block}thead tr{position:absolute;width:1px;height:1px;overflow:hidden;
 clip:rect(0 0 0 0)}tr{border:1px solid #d0d7de;border-radius:6px;margin:.6rem 0;padding:.2rem .4rem}
 td{border:0;padding:.15rem 0}td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
"""

SOURCE_WORDS = {"requester": "your", "repository": "this repository's", "installation": "the installation's",
                "operator": "the operator's"}
_HOSTS = re.compile(r"\b((?:console\.anthropic\.com|platform\.openai\.com|aistudio\.google\.com)(?:/[\w./-]*)?)")


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def rich(text: str) -> str:
    """Help text: `code` spans and provider consoles as links; everything else escaped."""
    out = []
    for index, part in enumerate(text.split("`")):
        if index % 2:
            out.append(f"<code>{esc(part)}</code>")
        else:
            out.append(_HOSTS.sub(lambda m: f'<a href="https://{m.group(1)}" rel="noreferrer">{m.group(1)}</a>',
                                  esc(part)))
    return "".join(out)


def page(title: str, body: str, *, login: str | None = None, csrf: str | None = None,
         crumbs: str = "") -> str:
    who = ""
    if login:
        who = (f'<form method="post" action="/settings/logout">{csrf_field(csrf)}'
               f'Signed in as <strong>{esc(login)}</strong> '
               f'<button class="secondary" type="submit">Sign out</button></form>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{esc(title)} · github-agent-bot</title><style>{STYLE}</style></head><body>'
            f'<header><nav aria-label="Site"><a href="/">github-agent-bot</a><a href="/settings">Settings</a></nav>'
            f'{who}</header><main><h1>{esc(title)}</h1>{crumbs}{body}</main></body></html>')


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
        f"<p>and adds <code>{esc(callback_url)}</code> to the App's <em>Callback URLs</em>. "
        'A GitHub App created from <a href="/">the start page</a> has all of this already.</p>')
    return page("Settings are not configured", body)


def login_page(message: str | None = None) -> str:
    body = (notice(message, error=bool(message)) +
            "<p>Connect your own API keys or subscriptions so the bot runs agents on your account "
            "when you ask it to. Keys are encrypted at rest and shown only by fingerprint.</p>"
            '<p><a class="button" href="/settings/login">Login with GitHub</a></p>')
    return page("Sign in", body)


@dataclass(frozen=True)
class Typed:
    """What the person typed into the add form, kept when it is refused or needs confirmation."""

    kind: str = ""
    value: str = ""
    message: str = ""  # why it was refused, shown by the field
    confirm: str = ""  # "replace this key?" question, when one is connected already


def error_page(title: str, message: str, back: str = "/settings", *, login: str | None = None,
               csrf: str | None = None, retry: str = "") -> str:
    """An error in the site's layout, with the signed-in header and, after a post, its form again."""
    return page(title, notice(message, error=True) + retry + f'<p><a href="{esc(back)}">Back</a></p>',
                login=login, csrf=csrf)


# ---- which credential each agent would use

@dataclass(frozen=True)
class Effective:
    agent: str
    source: str | None  # requester | repository | installation | operator | None
    label: str  # the credential kind's label, or the operator's variable
    fingerprint: str
    usable: bool
    reason: str  # why not usable, or where the credential is managed
    where: str = ""  # the owner of a shared key, e.g. "octo-org"


def effective_table(caption: str, rows: Iterable[Effective]) -> str:
    cells = "".join(
        f'<tr><th scope=row>{esc(r.agent)}</th><td data-label="Uses">{_source(r)}</td>'
        f'<td data-label="Fingerprint"><code>{esc(r.fingerprint or "—")}</code></td>'
        f'<td data-label="Usable now">{_usable(r)}</td></tr>' for r in rows)
    return (f"<table><caption>{esc(caption)}</caption><thead><tr><th scope=col>Agent</th>"
            "<th scope=col>Uses</th><th scope=col>Fingerprint</th><th scope=col>Usable now</th></tr></thead>"
            f"<tbody>{cells}</tbody></table>")


def _source(row: Effective) -> str:
    if row.source is None:
        return "nothing: no credential is connected"
    owner = f" ({esc(row.where)})" if row.where else ""
    return f"{esc(SOURCE_WORDS[row.source])}{owner} {esc(row.label)}"


def _usable(row: Effective) -> str:
    if row.usable:
        return '<span class="ok">yes</span>' + (f" <span class=muted>{esc(row.reason)}</span>" if row.reason else "")
    return f'<span class="bad">no</span>: {esc(row.reason)}'


# ---- stored keys

def credential_table(caption: str, rows: Iterable[dict], base: str, csrf: str) -> str:
    """The keys stored in one scope, with their use, and Test, Rotate and Delete."""
    rows = list(rows)
    if not rows:
        return f"<p>{esc(caption)}: none connected here.</p>"
    cells = "".join(_stored_row(r, base, csrf) for r in rows)
    return (f"<table><caption>{esc(caption)}</caption><thead><tr><th scope=col>Agent</th>"
            f"<th scope=col>Credential</th><th scope=col>Fingerprint</th><th scope=col>Updated</th>"
            f"<th scope=col>Last used</th><th scope=col>Runs</th><th scope=col>Spend</th>"
            f"<th scope=col><span class=visually-hidden>Actions</span></th></tr></thead>"
            f"<tbody>{cells}</tbody></table>")


def _stored_row(r: dict, base: str, csrf: str) -> str:
    name, what = esc(r["name"]), f'{esc(r["label"])} for {esc(r["agent"])}'
    hidden = f'{csrf_field(csrf)}<input type="hidden" name="kind" value="{name}">'
    spend = f'${r["usd"]:.4f} · {r["tokens"]} tokens' if r["runs"] else "—"
    return (f'<tr><td data-label="Agent">{esc(r["agent"])}</td><td data-label="Credential">{esc(r["label"])}</td>'
            f'<td data-label="Fingerprint"><code>{esc(r["fingerprint"])}</code></td>'
            f'<td data-label="Updated">{esc(r["updated_at"])} by {esc(r["updated_by"])}</td>'
            f'<td data-label="Last used">{esc(r["last_used"] or "never")}</td>'
            f'<td data-label="Runs">{esc(r["runs"])}</td><td data-label="Spend">{esc(spend)}</td><td>'
            f'<form method="post" action="{esc(base)}/keys/test">{hidden}'
            f'<button class="secondary" type="submit" aria-label="Test {what}">Test</button></form>'
            f'<a class="button secondary" href="{esc(base)}?rotate={name}#add" aria-label="Rotate {what}">Rotate</a> '
            f'<form method="post" action="{esc(base)}/keys/delete">{hidden}'
            f'<button class="danger" type="submit" aria-label="Delete {what}">Delete</button></form></td></tr>')


def add_form(action: str, kinds: Iterable, csrf: str, legend: str, typed: Typed | None = None) -> str:
    kinds, typed = list(kinds), typed or Typed()
    options = "".join(f'<option value="{esc(k.name)}"{" selected" if k.name == typed.kind else ""}>'
                      f"{esc(k.agent)}: {esc(k.label)}</option>" for k in kinds)
    if not typed.kind:  # no default kind: a key saved under the first kind by mistake is how keys got mixed up
        options = '<option value="" disabled selected>Choose what you paste…</option>' + options
    hints = "".join(f"<li><strong>{esc(k.agent)}: {esc(k.label)}</strong>. {rich(k.hint)}</li>" for k in kinds)
    problem = (f'<p id=value-error class=field-error role=alert>{esc(typed.message)}</p>'
               if typed.message else "")
    described = ' aria-describedby="value-error" aria-invalid="true"' if typed.message else ""
    kept = f' value="{esc(typed.value)}"' if typed.value else ""
    confirm = ""
    button = "Save"
    if typed.confirm:
        confirm = (f'<p class="notice" role="alert" id=value-error>{esc(typed.confirm)}</p>'
                   '<input type="hidden" name="replace" value="yes">')
        button = "Replace the key"
    return (f'<form id=add method="post" action="{esc(action)}"><fieldset><legend>{esc(legend)}</legend>'
            f"{csrf_field(csrf)}<label for=kind>Credential</label>"
            f'<select id=kind name="kind" required>{options}</select>'
            f'<label for=value>Key, token or file content</label>{problem}'
            f'<input id=value name="value" type="password" autocomplete="off" spellcheck="false" required'
            f'{kept}{described}>{confirm}'
            f'<p><button type="submit">{button}</button>'
            + (f' <a href="{esc(action.rsplit("/keys", 1)[0])}">Cancel</a>' if typed.confirm else "")
            + f"</p></fieldset></form>"
            f"<details><summary>Where to find each credential</summary><ul>{hints}</ul></details>")


def home(login: str, csrf: str, personal: list[dict], kinds: list, repos: list[str],
         installations: list[dict], effective: list[Effective], message: str | None = None,
         error: bool = False, typed: Typed | None = None) -> str:
    repo_links = "".join(f'<li><a href="/settings/repos/{esc(r)}">{esc(r)}</a></li>' for r in repos)
    repos_html = (f"<ul>{repo_links}</ul>" if repos else
                  "<p>You are not an admin or maintainer of any repository this bot is installed on.</p>")
    install_links = "".join(f'<li><a href="/settings/installations/{esc(i["id"])}">{esc(i["account"])}</a> '
                            f'({esc(i["type"].lower() or "account")})</li>' for i in installations)
    body = (notice(message, error) +
            "<h2>What runs when you ask</h2><p>Per agent, the credential a run you start would use "
            "where no repository or installation key applies.</p>" +
            effective_table("Your effective credentials", effective) +
            "<h2>Your keys and subscriptions</h2><p>Used when <em>you</em> ask the bot, on any repository.</p>" +
            credential_table("Your credentials", personal, "/settings", csrf) +
            add_form("/settings/keys", kinds, csrf, "Connect a personal credential", typed) +
            "<h2>Repositories you administer</h2><p>A repository key is used for anyone with write "
            "access who has not connected their own.</p>" + repos_html +
            ("<h2>Accounts you administer</h2><p>A key for a whole installation serves its repositories "
             f"that have no key of their own.</p><ul>{install_links}</ul>" if installations else ""))
    return page("Your settings", body, login=login, csrf=csrf)


def shared_page(title: str, blurb: str, base: str, login: str, csrf: str, rows: list[dict], kinds: list,
                history: list[dict], effective: list[Effective], github_url: str, github_label: str,
                message: str | None = None, error: bool = False, typed: Typed | None = None, review: str = "") -> str:
    """A repository's or an installation's credentials, what runs would use, and who changed them;
    `review`: a repository's review parts (bot/settings/review_page.py), already escaped."""
    crumbs = (f'<p class="crumbs"><a href="/settings">← All settings</a>'
              f'<a href="{esc(github_url)}" rel="noreferrer">{esc(github_label)} on GitHub</a></p>')
    body = (notice(message, error) + f"<p>{esc(blurb)}</p>" +
            "<h2>What the next run uses</h2><p>Per agent, for a requester without a key of their own.</p>" +
            effective_table(f"Effective credentials of {title}", effective) +
            "<h2>Keys stored here</h2>" +
            credential_table(f"Credentials of {title}", rows, base, csrf) +
            add_form(f"{base}/keys", kinds, csrf, f"Connect a credential for {title}", typed) +
            review + history_table(history))
    return page(title, body, login=login, csrf=csrf, crumbs=crumbs)


def history_table(history: list[dict]) -> str:
    if not history:
        return ""
    cells = "".join(f'<tr><td data-label="When">{esc(h["at"])}</td><td data-label="Who">{esc(h["actor"])}</td>'
                    f'<td data-label="Change">{esc(h["action"])}</td>'
                    f'<td data-label="Credential">{esc(h["label"])}</td>'
                    f'<td data-label="Fingerprint"><code>{esc(h["fingerprint"])}</code></td></tr>'
                    for h in history)
    return ("<h2>History</h2><table><caption>Recent changes</caption><thead><tr><th scope=col>When</th>"
            "<th scope=col>Who</th><th scope=col>Change</th><th scope=col>Credential</th>"
            f"<th scope=col>Fingerprint</th></tr></thead><tbody>{cells}</tbody></table>")
