"""The change the bot reports instead of pushing (a conflict, a refused push) is read from git up to
a cap: a large change is never read whole, and the message says the diff was cut."""
from __future__ import annotations

from bot.workspace import effects
from bot.workspace import git as git_module
from bot.workspace.push import DIFF_READ_CAP, MAX_DIFF_CHARS

from .test_effects import ask, edit


async def test_a_conflicting_change_whose_diff_is_huge_is_read_only_up_to_the_cap(remote, widget, github, api,
                                                                                    token, monkeypatch):
    reads, real = [], git_module.run_capped

    async def recorded(*args, **kwargs):
        reads.append(out := await real(*args, **kwargs))
        return out
    monkeypatch.setattr(git_module, "run_capped", recorded)
    head = remote.open_pull(widget, 5, "feature", {"feature.txt": "f\n"})
    github.add_pull(widget, 5, head_ref="feature", head_sha=head)
    wt = await edit(widget, 5, {"feature.txt": "mine\n" * 200_000}, token, pull_number=5)
    remote.commit(widget, "feature", {"feature.txt": "theirs\n"})
    out = await effects.apply(wt, ask(5, pull=await api.getitem(f"/repos/{widget}/pulls/5")), api, token)
    assert out.kind == "conflict"
    assert [r.read for r in reads if r.cut] == [DIFF_READ_CAP + 1]
    assert len(out.diff) <= MAX_DIFF_CHARS + 100 and out.diff.endswith("… (diff truncated)\n")
    assert f"The diff is longer than {MAX_DIFF_CHARS} characters and was truncated." in out.message
