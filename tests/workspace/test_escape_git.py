"""Escape suite, the bot's own git (threat model class 1): after an episode the bot runs git on the
host over a tree the agent wrote. Every attack below plants something that would make git start
the agent's program (which appends to a sentinel file outside the worktree) or read the agent's
configuration; every entry point must leave the sentinel absent and push nothing unexpected.

The attacks use only what an agent can do inside the sandbox: write files in the worktree (a
`.git` directory made of plain files is enough for git to treat a folder as a repository) and in
its own home (`evil_home`, outside the worktree). Entry points: the effects (stage, commit, push,
and the rebase when the branch moved), the worktree scrub and recycling, local mode's dirty-path
check; the Action and `bot run` end to end are in tests/action and tests/spine.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from bot.workspace import effects
from bot.workspace import local_checkout as local_mode
from bot.workspace import pool as worktree_pool
from bot.workspace import worktrees as workspace
from bot.workspace.local_checkout import dirty_paths, local_worktree
from tests.entry_settings import current

from .conftest import GIT_ENV, sh_git
from .test_effects import ask, edit

GITLINK = "libs/dep"


@pytest.fixture
def sentinel(tmp_path) -> Path:
    return tmp_path / "PWNED"


@pytest.fixture
def evil_home(tmp_path) -> Path:
    """The agent's persistent CLI home: writable by the agent, outside the worktree."""
    home = tmp_path / "agent-home"
    home.mkdir()
    return home


def payload(sentinel: Path, label: str) -> str:
    """A shell command git would run (fsmonitor, filters, textconv, ...): records that it ran."""
    return f"echo {label} >>{sentinel}; false"


def hook_script(folder: Path, sentinel: Path, names: tuple[str, ...]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(f"#!/bin/sh\necho hook-{name} >>{sentinel}\n")
        (folder / name).chmod(0o755)


HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-push", "post-checkout",
         "post-index-change", "reference-transaction", "pre-rebase", "post-rewrite", "pre-auto-gc")


def plant_gitdir(git_dir: Path, config: str) -> Path:
    """A git dir made of plain file writes: HEAD, objects/, refs/ and the agent's config."""
    (git_dir / "objects").mkdir(parents=True, exist_ok=True)
    (git_dir / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "config").write_text(config)
    return git_dir


def every_program_config(sentinel: Path, hooks: Path) -> str:
    """Config naming a program in every place git would look for one."""
    run = payload(sentinel, "config")
    return (f"[core]\n\tfsmonitor = {run}\n\thooksPath = {hooks}\n\tsshCommand = {run}\n"
            f"\teditor = {run}\n\tpager = {run}\n\tattributesFile = {hooks}/attributes\n"
            f"[sequence]\n\teditor = {run}\n[diff]\n\texternal = {run}\n"
            f"[filter \"pwn\"]\n\tclean = {run}\n\tsmudge = {run}\n\tprocess = {run}\n\trequired = false\n"
            f"[diff \"pwn\"]\n\ttextconv = {run}\n\tcommand = {run}\n"
            f"[merge \"pwn\"]\n\tdriver = {run}\n[gpg]\n\tprogram = {run}\n[commit]\n\tgpgSign = true\n"
            f"[protocol]\n\tallow = always\n[remote \"origin\"]\n\turl = ext::sh -c {run}\n"
            f"\tuploadpack = {run}\n\treceivepack = {run}\n")


# --- the attacks: each plants into the worktree at `root` (agent-writable) and `home` ---

def fsmonitor_in_submodule_path(root: Path, home: Path, sentinel: Path) -> None:
    """The reported escape: a repository planted in an existing (never initialised) submodule
    path, its config naming an fsmonitor hook; git's submodule status runs it."""
    plant_gitdir(root / GITLINK / ".git", f"[core]\n\tfsmonitor = {payload(sentinel, 'fsmonitor')}\n")
    (root / GITLINK / "planted.txt").write_text("x\n")


def include_in_submodule_path(root: Path, home: Path, sentinel: Path) -> None:
    """The same, with the hook behind an include.path pointing at a file in the agent's home."""
    (home / "evil.cfg").write_text(f"[core]\n\tfsmonitor = {payload(sentinel, 'include')}\n")
    plant_gitdir(root / GITLINK / ".git", f"[include]\n\tpath = {home / 'evil.cfg'}\n"
                 f"[includeIf \"gitdir:/\"]\n\tpath = {home / 'evil.cfg'}\n")
    (root / GITLINK / "planted.txt").write_text("x\n")


def clean_filter_in_submodule_path(root: Path, home: Path, sentinel: Path) -> None:
    """A real repository (made with git, as an agent with `run` can) in the submodule path whose
    tracked file is dirty and has a clean filter: the submodule's status would hash it."""
    dep = root / GITLINK
    sh_git("init", "--quiet", str(dep))
    (dep / "f.txt").write_text("one\n")
    (dep / ".gitattributes").write_text("* filter=pwn\n")
    sh_git("add", "f.txt", ".gitattributes", cwd=dep)
    sh_git("commit", "--quiet", "-m", "inner", cwd=dep)
    with open(dep / ".git" / "config", "a") as config:
        config.write(every_program_config(sentinel, home / "hooks"))
    hook_script(home / "hooks", sentinel, HOOKS)
    (dep / "f.txt").write_text("two, dirty\n")


def fsmonitor_in_nested_repository(root: Path, home: Path, sentinel: Path) -> None:
    """A new repository anywhere else in the tree, its config naming programs."""
    plant_gitdir(root / "vendor" / "lib" / ".git", every_program_config(sentinel, home / "hooks"))
    hook_script(home / "hooks", sentinel, HOOKS)
    (root / "vendor" / "lib" / "x.txt").write_text("x\n")


def git_file_to_agent_gitdir(root: Path, home: Path, sentinel: Path) -> None:
    """The worktree's `.git` file rewritten to name a git dir in the agent's home whose config
    sets core.hooksPath, hooks, fsmonitor, filters and diff drivers; `.gitattributes` routes
    every file through the filter and the diff drivers."""
    gitdir = plant_gitdir(home / "gitdir", every_program_config(sentinel, home / "hooks"))
    hook_script(home / "hooks", sentinel, HOOKS)
    hook_script(gitdir / "hooks", sentinel, HOOKS)
    (home / "hooks" / "attributes").write_text("* filter=pwn diff=pwn merge=pwn\n")
    (root / ".git").unlink()
    (root / ".git").write_text(f"gitdir: {gitdir}\n")
    (root / ".gitattributes").write_text("* filter=pwn diff=pwn merge=pwn\n")


def embedded_bare_repository(root: Path, home: Path, sentinel: Path) -> None:
    """A bare repository as ordinary files (HEAD, config, objects/, refs/): pushed, it would run
    its config for anyone who clones the branch and enters the folder."""
    gitdir = plant_gitdir(root / "docs" / "evil", every_program_config(sentinel, home / "hooks"))
    (gitdir / "objects" / "keep").write_text("")
    (gitdir / "refs" / "heads" / "keep").write_text("")


NESTED = [fsmonitor_in_submodule_path, include_in_submodule_path, clean_filter_in_submodule_path,
          fsmonitor_in_nested_repository]
ALL = NESTED + [git_file_to_agent_gitdir, embedded_bare_repository]


def ids(attacks) -> list[str]:
    return [attack.__name__.replace("_", "-") for attack in attacks]


# --- a repository with a submodule, as upstream would have it ---

def add_gitlink(remote, full_name: str, path: str = GITLINK) -> str:
    """Commit a gitlink (a submodule pointer, never initialised in the bot's worktrees) and its
    .gitmodules entry on main."""
    bare = remote.path(full_name)
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(bare / "gitlink-index")}

    def git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", *args], cwd=bare, env=env, input=stdin, capture_output=True,
                              text=True, check=True).stdout.strip()

    base = git("rev-parse", "refs/heads/main")
    git("read-tree", base)
    modules = git("hash-object", "-w", "--stdin",
                  stdin=f'[submodule "dep"]\n\tpath = {path}\n\turl = https://example.com/dep.git\n')
    git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")
    git("update-index", "--add", "--cacheinfo", f"100644,{modules},.gitmodules")
    sha = git("commit-tree", git("write-tree"), "-p", base, "-m", "add a submodule")
    git("update-ref", "refs/heads/main", sha)
    (bare / "gitlink-index").unlink()
    return sha


@pytest.fixture
def widget_sub(remote, widget) -> str:
    add_gitlink(remote, widget)
    return widget


def branch_files(remote, full_name: str, branch: str) -> set[str]:
    return set(sh_git("ls-tree", "-r", "--name-only", branch, cwd=remote.path(full_name)).split("\n"))


BASE_FILES = {"README.md", "src/app.py", ".github/workflows/ci.yml", ".gitmodules", GITLINK}


def assert_not_run(sentinel: Path) -> None:
    assert not sentinel.exists(), f"the agent's program ran on the host: {sentinel.read_text()!r}"


# --- effects: stage, commit, push ---

@pytest.mark.parametrize("attack", ALL, ids=ids(ALL))
async def test_effects_run_nothing_the_agent_planted(attack, remote, widget_sub, github, api, token,
                                                     sentinel, evil_home):
    """Staging, committing and pushing over a planted tree starts none of the agent's programs."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n"}, token)
    attack(wt.path, evil_home, sentinel)
    await effects.apply(wt, ask(1), api, token)
    assert_not_run(sentinel)


@pytest.mark.parametrize("attack", NESTED + [embedded_bare_repository],
                         ids=ids(NESTED + [embedded_bare_repository]))
async def test_effects_refuse_a_planted_repository_and_push_nothing(attack, remote, widget_sub, github,
                                                                    api, token, sentinel, evil_home):
    """A repository planted anywhere in the tree is named in a refusal; no branch is pushed."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n"}, token)
    attack(wt.path, evil_home, sentinel)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "git repositor" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget_sub)) == ""


async def test_effects_ignore_a_rewritten_git_file_and_commit_only_the_change(
        remote, widget_sub, github, api, token, sentinel, evil_home):
    """With `.git` pointing at the agent's git dir, the commit is made in the bot's own git dir
    from the bot's base, holds exactly the agent's file changes, and lands where it should."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n"}, token)
    git_file_to_agent_gitdir(wt.path, evil_home, sentinel)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request", out.message
    assert branch_files(remote, widget_sub, out.branch) == BASE_FILES | {".gitattributes"}
    assert remote.show(widget_sub, out.branch, "README.md") == "# widget, edited"
    assert sh_git("rev-parse", f"{out.commit_sha}^", cwd=remote.path(widget_sub)) == wt.base_sha
    assert_not_run(sentinel)


async def test_effects_keep_the_submodule_pointer_and_skip_files_inside_it(
        remote, widget_sub, github, api, token, sentinel):
    """Files written into a submodule path (no repository planted) are not committed and the
    gitlink stays as it was; the rest of the change lands."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n", f"{GITLINK}/inside.txt": "x\n"},
                    token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request", out.message
    assert branch_files(remote, widget_sub, out.branch) == BASE_FILES
    assert sh_git("rev-parse", f"{out.branch}:{GITLINK}", cwd=remote.path(widget_sub)) == "1" * 40


async def test_effects_commit_file_modes_symlinks_and_deletions(remote, widget_sub, github, api, token):
    """The index built from the admitted files keeps what `git add --all` kept: an executable
    bit, a symlink as a link, a deletion, a file replaced by a folder, ignored files left out."""
    wt = await edit(widget_sub, 1, {"run.sh": "#!/bin/sh\n", "build/out.o": "obj\n",
                                    ".gitignore": "build/\n"}, token)
    (wt.path / "run.sh").chmod(0o755)
    (wt.path / "README.md").unlink()
    (wt.path / "src" / "app.py").unlink()
    (wt.path / "src" / "app.py").mkdir()
    (wt.path / "src" / "app.py" / "inner.py").write_text("x = 1\n")
    (wt.path / "GUIDE.md").symlink_to("src/app.py/inner.py")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request", out.message
    listing = sh_git("ls-tree", "-r", out.branch, cwd=remote.path(widget_sub))
    modes = {line.split("\t")[1]: line.split()[0] for line in listing.splitlines()}
    assert modes == {"run.sh": "100755", "GUIDE.md": "120000", "src/app.py/inner.py": "100644",
                     ".gitignore": "100644", ".gitmodules": "100644", GITLINK: "160000",
                     ".github/workflows/ci.yml": "100644"}


async def test_push_after_the_branch_moved_runs_nothing_planted(remote, widget_sub, github, api, token,
                                                               sentinel, evil_home):
    """The rebase-and-retry path (fetch, replay, push) over a tree whose `.git` names the agent's
    git dir starts none of its programs and pushes the bot's commit on the new tip."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n"}, token)
    first = await effects.apply(wt, ask(1), api, token)
    await workspace.remove(wt)
    moved = remote.commit(widget_sub, first.branch, {"NOTES.md": "someone else\n"})
    wt = await edit(widget_sub, 1, {"src/app.py": "print('again')\n"}, token)
    git_file_to_agent_gitdir(wt.path, evil_home, sentinel)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request" and out.branch == first.branch, out.message
    assert remote.rev(widget_sub, f"refs/heads/{out.branch}") == out.commit_sha
    assert sh_git("rev-parse", f"{out.commit_sha}^", cwd=remote.path(widget_sub)) == moved
    assert_not_run(sentinel)


@contextlib.contextmanager
def unblocking(fifo: Path):
    """Whatever happens, let a reader blocked on `fifo` go (so a failing test leaves no git behind)."""
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def test_effects_refuse_a_fifo_where_git_reads_a_file(remote, widget_sub, github, api, token):
    """A FIFO named `.gitignore` would block the bot's git for ever: the effect is refused first."""
    wt = await edit(widget_sub, 1, {"README.md": "# widget, edited\n"}, token)
    os.mkfifo(wt.path / "src" / ".gitignore")
    with unblocking(wt.path / "src" / ".gitignore"):
        out = await asyncio.wait_for(effects.apply(wt, ask(1), api, token), 120)
    assert out.kind == "refused" and "`src/.gitignore`" in out.message


# --- the worktree scrub and recycling ---

@pytest.mark.parametrize("attack", ALL, ids=ids(ALL))
async def test_scrub_runs_nothing_the_agent_planted(attack, remote, widget_sub, sentinel, evil_home):
    """Giving a finished job's worktree back (scrub, park) starts none of the agent's programs."""
    wt = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    attack(wt.path, evil_home, sentinel)
    await workspace.remove(wt)
    assert_not_run(sentinel)


@pytest.mark.parametrize("attack", NESTED, ids=ids(NESTED))
async def test_planted_repository_is_never_recycled(attack, remote, widget_sub, sentinel, evil_home):
    """A worktree holding a planted repository is deleted, not parked; the next job's checkout
    has nothing of it and taking a spare runs nothing either."""
    wt = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    attack(wt.path, evil_home, sentinel)
    await workspace.remove(wt)
    assert worktree_pool.spares(wt.mirror) == [] and not wt.path.exists()
    again = await workspace.prepare(widget_sub, f"{widget_sub}#2", current())
    assert not (again.path / GITLINK / ".git").exists() and not (again.path / "vendor").exists()
    assert list((again.path / GITLINK).iterdir()) == []
    assert_not_run(sentinel)


async def test_files_left_in_a_submodule_path_are_not_recycled(remote, widget_sub):
    """Files in a submodule path (which git's clean and status never look into) do not survive
    into the next job: that worktree is deleted instead of parked."""
    wt = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    (wt.path / GITLINK / "left.txt").write_text("from job 1\n")
    await workspace.remove(wt)
    again = await workspace.prepare(widget_sub, f"{widget_sub}#2", current())
    assert list((again.path / GITLINK).iterdir()) == []


async def test_crashed_jobs_leftover_is_replaced_without_running_it(remote, widget_sub, sentinel,
                                                                   evil_home):
    """A worktree a crashed job left behind (never scrubbed) is removed before the next job on
    that conversation, running nothing planted in it."""
    wt = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    for attack in (include_in_submodule_path, fsmonitor_in_nested_repository, git_file_to_agent_gitdir):
        attack(wt.path, evil_home, sentinel)
    again = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    assert not (again.path / "vendor").exists()
    assert_not_run(sentinel)


# --- local mode: the dirty-path check over the user's own checkout ---

def local_repo(tmp_path: Path, submodule: bool = True) -> Path:
    """The user's checkout, with an initialised submodule at libs/dep."""
    repo = tmp_path / "repo"
    sh_git("init", "--quiet", str(repo))
    (repo / "hello.py").write_text("print('hello')\n")
    sh_git("add", "hello.py", cwd=repo)
    sh_git("commit", "--quiet", "-m", "init", cwd=repo)
    if submodule:
        dep = tmp_path / "dep"
        sh_git("init", "--quiet", str(dep))
        (dep / "lib.txt").write_text("lib\n")
        sh_git("add", "lib.txt", cwd=dep)
        sh_git("commit", "--quiet", "-m", "dep", cwd=dep)
        sh_git("-c", "protocol.file.allow=always", "submodule", "--quiet", "add", str(dep), GITLINK,
               cwd=repo)
        sh_git("commit", "--quiet", "-m", "add dep", cwd=repo)
    return repo


def replace_submodule_git_file(root: Path, home: Path, sentinel: Path) -> None:
    """In the user's checkout the submodule's `.git` is a file naming .git/modules/dep (read-only
    in the sandbox): the agent swaps it for a git dir of its own."""
    (root / GITLINK / ".git").unlink()
    fsmonitor_in_submodule_path(root, home, sentinel)


LOCAL = [replace_submodule_git_file, include_in_submodule_path, clean_filter_in_submodule_path,
         fsmonitor_in_nested_repository]


@pytest.mark.parametrize("attack", LOCAL, ids=ids(LOCAL))
async def test_local_dirty_check_runs_nothing_planted(attack, tmp_path, sentinel, evil_home):
    """`bot run`'s before/after dirty-path check over the user's checkout starts no program the
    agent planted in a submodule path or a nested repository."""
    repo = local_repo(tmp_path)
    wt = await local_worktree(repo, f"local:{repo}")
    if attack is not replace_submodule_git_file:
        (repo / GITLINK / ".git").unlink()
    attack(repo, evil_home, sentinel)
    (repo / "hello.py").write_text("print('changed')\n")
    assert "hello.py" in await dirty_paths(wt)
    assert_not_run(sentinel)


async def test_local_dirty_check_ignores_a_rewritten_git_file(tmp_path, sentinel, evil_home):
    """The user's checkout is a linked worktree (its `.git` is a file); the agent rewrites that
    file to name its own git dir. The check still reads the user's git dir, recorded before."""
    main = local_repo(tmp_path / "main", submodule=False)
    linked = tmp_path / "linked"
    sh_git("worktree", "add", "--quiet", str(linked), cwd=main)
    wt = await local_worktree(linked, f"local:{linked}")
    git_file_to_agent_gitdir(linked, evil_home, sentinel)
    (linked / "hello.py").write_text("print('changed')\n")
    assert await dirty_paths(wt) == {"hello.py", ".gitattributes"}
    assert_not_run(sentinel)


async def test_local_dirty_check_stops_on_a_fifo_instead_of_hanging(tmp_path, monkeypatch):
    """A FIFO as a planted repository's HEAD blocks git status; the check gives up (nothing
    counted) rather than hang `bot run`."""
    monkeypatch.setattr(local_mode, "DIRTY_CHECK_TIMEOUT_S", 2.0)
    repo = local_repo(tmp_path, submodule=False)
    wt = await local_worktree(repo, f"local:{repo}")
    plant_gitdir(repo / "vendor" / "lib" / ".git", "")
    (repo / "vendor" / "lib" / ".git" / "HEAD").unlink()
    os.mkfifo(repo / "vendor" / "lib" / ".git" / "HEAD")
    with unblocking(repo / "vendor" / "lib" / ".git" / "HEAD"):
        assert await asyncio.wait_for(dirty_paths(wt), 120) == set()


# --- the bot's git dir, seen from inside the sandbox ---

@pytest.mark.sandbox
async def test_native_mode_cannot_write_the_bots_git_dir(remote, widget_sub, tmp_path):
    """With the worktree writable (native mode), nothing the bot's git reads from its own git dir
    can be written from inside: the mirror's config, info/attributes, hooks, packed refs, and
    the worktree's admin dir (config.worktree, HEAD, index)."""
    from sandbox.base import Limits, SandboxConfig
    from sandbox.tier1 import Tier1Spawner

    wt = await workspace.prepare(widget_sub, f"{widget_sub}#1", current())
    targets = [wt.mirror / "config", wt.mirror / "info" / "attributes", wt.mirror / "hooks" / "pre-commit",
               wt.mirror / "packed-refs", wt.git_dir / "config.worktree", wt.git_dir / "HEAD",
               wt.git_dir / "index", wt.git_dir / "commondir"]
    probes = " ".join(f"'{target}'" for target in targets)
    script = (f"for f in {probes}; do if (: >>\"$f\") 2>/dev/null; then echo \"WROTE $f\"; fi; done; "
              f"mkdir '{wt.git_dir}/hooks' 2>/dev/null && echo WROTE-hooks; echo worktree >/workspace/ok.txt")
    home = tmp_path / "home"
    home.mkdir()
    config = SandboxConfig(workdir=wt.path, home=home, writable=True,
                           limits=Limits(timeout_s=30, memory_bytes=256 << 20, pids=64))
    proc = await Tier1Spawner(host=current().sandbox_host).start(config, ["sh", "-c", script], {})
    out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    await proc.wait()
    assert (wt.path / "ok.txt").read_text() == "worktree\n", err.decode()
    assert "WROTE" not in out.decode()
    assert not (wt.mirror / "hooks" / "pre-commit").exists() and not (wt.git_dir / "hooks").exists()


# --- end to end: the real Codex CLI plants the attack with its `run` tool ---

def plant_command(sentinel: Path) -> str:
    """What a prompt-injected agent runs in its sandbox: the reported escape, plain shell."""
    return ("mkdir -p libs/dep/.git/objects libs/dep/.git/refs/heads && "
            "echo 'ref: refs/heads/main' >libs/dep/.git/HEAD && "
            f"printf '[core]\\n\\tfsmonitor = %s\\n' '{payload(sentinel, 'e2e')}' >libs/dep/.git/config && "
            "echo x >libs/dep/x && echo changed >>README.md && echo planted")


@pytest.mark.e2e
@pytest.mark.sandbox
def test_action_runs_nothing_the_agent_planted(tmp_path, monkeypatch, sentinel):
    """`bot action` as a workflow step: the agent plants the escape through `run`; the step ends
    with the refusal in the thread, nothing pushed, and the agent's program never ran."""
    from tests.action.conftest import REPO, WORKFLOW_TOKEN, Runner
    from tests.action.conftest import payload as event
    from tests.action.test_action_e2e import run_step
    from tests.fakes.github import FakeGitHub
    from tests.fakes.provider import FakeProvider, call, say

    from .conftest import RemoteHost

    remotes = tmp_path / "remotes"
    host = RemoteHost(remotes)
    host.create(REPO, {"README.md": "# Hello-World\n"})
    add_gitlink(host, REPO)
    runner_root = tmp_path / "runner"
    runner_root.mkdir()
    runner = Runner(runner_root, monkeypatch)
    with FakeGitHub() as github, FakeProvider() as provider:
        github.tokens[WORKFLOW_TOKEN] = 0
        github.add_repo(REPO)
        github.add_issue(REPO, 1, title="Spelling error in the README file")
        github.set_permission(REPO, "Codertocat", "admin")
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        comment = github.add_comment(REPO, 1, "@bot codex fix it", user="Codertocat")
        runner.event("issue_comment", event("issue_comment.created", "@bot codex fix the readme",
                                            id=comment["id"]))
        provider.script(call("run", {"command": plant_command(sentinel)}), say("Fixed the readme."))
        done = run_step(runner, github, provider, remotes)
        answer = github.comments(REPO, 1)[-1]["body"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nested git repositories" in answer and "`libs/dep`" in answer
    assert sh_git("branch", "--list", "bot/*", cwd=host.path(REPO)) == ""
    assert_not_run(sentinel)


@pytest.mark.e2e
@pytest.mark.sandbox
def test_bot_run_runs_nothing_the_agent_planted(tmp_path, sentinel):
    """`bot run` in the user's checkout (with a submodule): the agent plants the escape through
    `run`; the dirty-path check after the episode never runs it, and counts the README."""
    import sys

    from tests.fakes.provider import FakeProvider, call, say
    from tests.spine.service import ROOT

    repo = tmp_path / "repo"
    sh_git("init", "--quiet", str(repo))
    (repo / "README.md").write_text("# hello\n")
    sh_git("add", "README.md", cwd=repo)
    sh_git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{GITLINK}", cwd=repo)
    sh_git("commit", "--quiet", "-m", "init", cwd=repo)
    (repo / GITLINK).mkdir(parents=True)
    with FakeProvider() as provider:
        provider.script(call("run", {"command": plant_command(sentinel)}), say("Done."))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GITHUB_"))}
        env.update(BOT_DATA_DIR=str(tmp_path / "data"), BOT_CODEX_BASE_URL=provider.url,
                   OPENAI_API_KEY="sk-local-test-0123456789",
                   PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "bot.cli", "run", "fix the readme", "--agent", "codex",
                               "--repo", str(repo)], env=env, capture_output=True, text=True, timeout=240,
                              cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo / GITLINK / ".git" / "config").exists()  # the agent did plant it
    assert "1 file changed" in done.stdout
    assert_not_run(sentinel)
