"""The run page shows the bot's commit as a diff read from the mirror up to a cap, saying when it
was cut (bot/web/run_page.py:_diff): an agent's commit can make a diff of any size."""
from __future__ import annotations

from bot.web import run_page
from bot.workspace import git as git_module
from tests.workspace.conftest import sh_git


def _mirror_with_commit(data_dir, text: str) -> tuple[str, str]:
    source = data_dir / "source"
    sh_git("init", "-q", str(source))
    (source / "lines.txt").write_text("a\n")
    sh_git("add", ".", cwd=source)
    sh_git("commit", "-qm", "base", cwd=source)
    base = sh_git("rev-parse", "HEAD", cwd=source)
    (source / "lines.txt").write_text(text)
    sh_git("commit", "-qam", "the bot's commit", cwd=source)
    sh_git("clone", "-q", "--bare", str(source), str(data_dir / "mirrors" / "octo" / "widget.git"))
    return base, sh_git("rev-parse", "HEAD", cwd=source)


def _run_and_events(base: str, commit: str) -> tuple[dict, list[dict]]:
    return ({"conversation": "octo/widget#1", "base_commit": base},
            [{"tier": "enforced", "kind": "commit", "raw": commit}])


async def test_a_huge_commit_diff_is_read_up_to_the_cap_and_the_page_says_it_was_cut(tmp_path, monkeypatch):
    reads, real = [], git_module.run_capped

    async def recorded(*args, **kwargs):
        reads.append(out := await real(*args, **kwargs))
        return out
    monkeypatch.setattr(git_module, "run_capped", recorded)
    base, commit = _mirror_with_commit(tmp_path, "b\n" * 300_000)
    shown = await run_page._diff(*_run_and_events(base, commit), tmp_path)
    assert [out.read for out in reads] == [run_page.DIFF_READ_CAP + 1]
    body, _, note = shown.rpartition("\n")
    assert len(body) <= run_page.MAX_DIFF and note == f"… (the diff was cut at {run_page.MAX_DIFF:,} characters)"


async def test_a_small_commit_diff_is_shown_whole(tmp_path):
    base, commit = _mirror_with_commit(tmp_path, "b\n")
    shown = await run_page._diff(*_run_and_events(base, commit), tmp_path)
    assert shown.endswith("-a\n+b\n")
