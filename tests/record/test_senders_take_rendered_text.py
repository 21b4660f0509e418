"""Every text the bot sends comes out of one renderer (bot/record/render.py): the places that write
to GitHub are a declared list, each sends what the renderer returned (`Rendered`, checked by
`render.required` or made by `render.outgoing` right before the call), and only the renderer makes
a `Rendered`. A new way of writing to GitHub fails here until it is declared and rendered."""
from __future__ import annotations

import ast
from pathlib import Path

import httpx

from bot.github.client import RetryingAPI, Thread
from tests.fakes.github import FakeGitHub
from tests.record.github_view import acts

BOT = Path(__file__).resolve().parents[2] / "bot"
# (module, enclosing function) of each GitHub write with a request body, and how its text is rendered
SENDERS = {
    ("github/client.py", "Thread.create_comment.post_once"): "render.outgoing (_masked)",
    ("github/client.py", "Thread.update_comment"): "render.outgoing (_masked)",
    ("github/client.py", "Thread.react"): "a reaction's name, no text",
    ("review/post.py", "post_review"): "render.outgoing (masked, inline_in_body)",
    ("review/checks.py", "start"): "render.outgoing",
    ("review/checks.py", "finish"): "render.outgoing (sent)",
    ("workspace/effects.py", "_open_pull"): "render.required",
    ("settings/github.py", "exchange_code"): "the OAuth code exchange, no text to show",
    ("automations/automation_issue.py", "ensure"): "render.required (render.title, render.outgoing)",
    ("review/learned_pull.py", "_make_branch"): "a ref and a commit sha, no text to show",
    ("review/learned_pull.py", "_put"): "render.required message; the file as read plus or minus learned_pr.line",
    ("review/learned_pull.py", "_retitled"): "render.required (learned_pr.title, learned_pr.body)",
    ("review/learned_pull.py", "_create_pull"): "render.required",
    ("automations/config_refusal.py", "_post"): "render.required (body: render.outgoing)",
    ("cli/action_schedule.py", "issue_of"): "render.required (automation_issue.title, automation_issue.body)",
    ("automations/labels.py", "RepoLabels.add"): "names of labels the repository has (the allowlist), no text to show",
}


def github_writes() -> set[tuple[str, str]]:
    """(module, enclosing function) of every `….post/patch/put(…, data=…)` call under bot/."""
    return {(str(path.relative_to(BOT)), where) for path in BOT.rglob("*.py")
            for where in _writes(ast.parse(path.read_text()), [])}


def _writes(node: ast.AST, names: list[str]) -> list[str]:
    found = []
    for child in ast.iter_child_nodes(node):
        inner = names + [child.name] if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
            else names
        if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                and child.func.attr in ("post", "patch", "put") and any(k.arg == "data" for k in child.keywords)):
            found.append(".".join(inner))
        found += _writes(child, inner)
    return found


def test_every_github_write_is_a_declared_sender_of_rendered_text():
    assert github_writes() == set(SENDERS)


def test_only_the_renderer_makes_rendered_text():
    makers = [str(path.relative_to(BOT)) for path in BOT.rglob("*.py")
              if path.name != "render.py" and any(
                  isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
                  and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "Rendered"
                  for node in ast.walk(ast.parse(path.read_text())))]
    assert makers == []


async def test_a_comment_the_bot_composed_passes_the_gate_on_its_way_to_github(monkeypatch):
    """Whatever code path composed a comment, what GitHub receives closes nothing and names no team."""
    gh = FakeGitHub(require_auth=False).start()
    try:
        gh.add_repo("octo/repo")
        gh.add_issue("octo/repo", 1, title="t", body="b", user="alice")
        async with httpx.AsyncClient() as client:
            thread = Thread(RetryingAPI(client, oauth_token="t", base_url=gh.url), "octo/repo", 1)
            await thread.create_comment("Done. This closes #2, cc @octo-org/security ![x](https://evil.example/p.png)")
        [comment] = gh.comments("octo/repo", 1)
    finally:
        gh.stop()
    assert acts(comment["body"]) == []
