"""Running git for the bot: no prompts, no user config, no program anyone else named.

The installation token reaches git through a credential helper defined in GIT_CONFIG_*
environment variables; the helper reads the token from BOT_GIT_TOKEN at the moment git
asks. Nothing with the token is ever written to a URL, a config file, argv or a log.

After an episode the bot runs git on the host over a tree the agent wrote, which is hostile. git is
full of places where a repository names a program to run: hooks and core.hooksPath,
core.fsmonitor, clean/smudge/process filters and textconv or diff drivers (chosen by
`.gitattributes`, defined in config), core.sshCommand, editors, pagers, transports (`ext::`,
remote.*.uploadpack), include.path to more of the same. And git finds its configuration through
the tree: a `.git` file names any git dir, a folder holding `.git` is a repository whose config
git reads, and a submodule's status is a second git run inside it. The reported escape was
exactly that: a repository planted in a submodule path, its config naming an fsmonitor hook,
run by the bot's `git add`.

The mechanism, in three layers, each enough for some of the family and together closing it:

1. Every git the bot starts gets this module's environment: no system or global config, no
   HOME or XDG config, and GIT_CONFIG_* overrides (which outrank every config file, and which
   git passes on to any git it starts inside a submodule) that switch off fsmonitor, the
   untracked cache, hooks, attribute files outside the tree, submodule recursion in every
   command, pagers and editors (GIT_EDITOR/GIT_PAGER name harmless programs), and every
   transport but the one the bot's own remotes use.
2. Commands over an agent-touched tree are pinned (`pinned_env`): GIT_DIR is the worktree's
   admin dir recorded when the bot made it (under the mirror, bot-owned, mounted read-only in
   the sandbox), GIT_WORK_TREE the tree; git never discovers a repository from the tree's own
   `.git`. Commands that need no work tree (hashing, the index, commit, push, diffs between
   commits) get no GIT_WORK_TREE at all, so not even `.gitattributes` in the tree is read.
3. No git runs over a tree that holds a repository of the agent's (bot/workspace/tree_scan.py):
   git reads a nested repository's config even under --ignore-submodules=all (to resolve its
   HEAD), so the tree is walked first, in Python, and a `.git` in any spelling below the top
   ends the effect (refused) or the worktree (deleted, not recycled). The index is then built
   from the admitted files only, hashed with --no-filters (effects.py), never by `git add`.

The other way (git in a tier-1 sandbox without the token or the data dir) was rejected: push
needs the token, the mirror's object store must be writable for hashing and committing, and a
sandbox per git call costs more than the whole effect.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bot.config import Settings, variable
from bot.errors import BotError
from bot.record.leaks import mask
from sandbox.bounded import KILLED, Capped, run_capped

log = logging.getLogger(__name__)

TOKEN_ENV = "BOT_GIT_TOKEN"
# A shell function, not a file: `git config` sees only this text, never the token.
_CREDENTIAL_HELPER = ('!f() { test "$1" = get || exit 0; echo username=x-access-token; '
                      f'echo "password=${TOKEN_ENV}"; }}; f')
_SAFE_CONFIG = (
    ("credential.helper", ""),  # drop any helper from elsewhere before ours
    ("credential.helper", _CREDENTIAL_HELPER),
    # programs a repository could name, and the config that would name them
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.protectNTFS", "true"),
    ("core.protectHFS", "true"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),  # gc is run on purpose, never as a side effect of a fetch under a lock
    ("maintenance.auto", "false"),
    ("fetch.fsckObjects", "false"),
    ("advice.detachedHead", "false"),
    ("init.defaultBranch", "main"),
)
# the most of one git's stdout the bot reads: a listing of a very large tree fits, a repository
# that makes git print more (a diff, a tree of millions of names) fails visibly instead of filling memory
OUTPUT_CAP = 64 << 20
# every transport is refused but https and the one BOT_GIT_BASE_URL uses (`ext::` runs a program)
_TRANSPORTS = ("https", "http", "ssh", "file")

# programs git may start on its own, each named here so that nothing else can name it
_PROGRAMS = {"GIT_EDITOR": "false", "GIT_SEQUENCE_EDITOR": "false", "GIT_PAGER": "cat", "PAGER": "cat",
             "GIT_SSH_COMMAND": "ssh -oBatchMode=yes", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}

# how the operator's host reaches github.com (proxies, private CAs), never credentials
_PASSED_THROUGH = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                   "GIT_SSL_CAINFO", "SSL_CERT_FILE", "SSL_CERT_DIR")


class GitError(BotError, RuntimeError):
    """A git command failed; the message carries git's stderr, with the token redacted."""

    def __init__(self, args: tuple[str, ...], code: int, stderr: str):
        self.code, self.stderr = code, stderr
        super().__init__(f"git {' '.join(args[:2])} failed ({code}): {stderr.strip()[-800:]}")


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @classmethod
    def of(cls, handle: str, name: str | None = None, email: str | None = None) -> Identity:
        """The bot's author and committer: BOT_GIT_NAME and BOT_GIT_EMAIL, else its handle's."""
        return cls(name or f"{handle}[bot]", email or f"{handle}[bot]@users.noreply.github.com")


@dataclass(frozen=True)
class GitProfile:
    """The operator's settings for the bot's own git: who its commits are by, and the git host it
    clones from and pushes to (whose transport, besides https, is the one git may use)."""

    identity: Identity
    base_url: str

    @classmethod
    def of(cls, settings: Settings) -> GitProfile:
        identity = Identity.of(settings.handle, settings.text("BOT_GIT_NAME"), settings.text("BOT_GIT_EMAIL"))
        return cls(identity, settings.git_base_url)

    def clone_url(self, full_name: str) -> str:
        return f"{self.base_url}/{full_name}.git"


def _table_default() -> GitProfile:
    """The profile of an operator who set nothing: for git that neither commits nor reaches a host."""
    handle = str(variable("BOT_HANDLE").default).lstrip("@")
    return GitProfile(Identity.of(handle), str(variable("GITHUB_SERVER_URL").default).rstrip("/"))


DEFAULT_PROFILE = _table_default()


def git_env(token: str | None = None, profile: GitProfile | None = None) -> dict[str, str]:
    """A scrubbed environment for git: system/global config ignored, our settings injected.
    Built from nothing: no GIT_* variable of the bot's own environment reaches git."""
    profile = profile or DEFAULT_PROFILE
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "XDG_CONFIG_HOME": "/nonexistent", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1",
           "GIT_NO_REPLACE_OBJECTS": "1", "GIT_OPTIONAL_LOCKS": "0", **_PROGRAMS}
    env.update({name: os.environ[name] for name in _PASSED_THROUGH if os.environ.get(name)})
    settings = _SAFE_CONFIG + _transport_config(profile.base_url)
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    if token:
        env[TOKEN_ENV] = token
    who = profile.identity
    env.update(GIT_AUTHOR_NAME=who.name, GIT_AUTHOR_EMAIL=who.email,
               GIT_COMMITTER_NAME=who.name, GIT_COMMITTER_EMAIL=who.email)
    return env


def _transport_config(base: str) -> tuple[tuple[str, str], ...]:
    scheme = urlsplit(base).scheme or ("file" if base.startswith(("/", ".")) else "ssh")  # git@host:
    allowed = sorted({"https", scheme} & set(_TRANSPORTS))
    return (("protocol.allow", "never"), *((f"protocol.{name}.allow", "always") for name in allowed))


def pinned_env(git_dir: Path | str | None, work_tree: Path | str | None = None) -> dict[str, str]:
    """Name the repository instead of letting git find it: GIT_DIR is the bot-owned git dir, so
    a `.git` file or folder the agent wrote is never read. Without a work tree, git reads
    nothing of the tree at all (not even its `.gitattributes`)."""
    if git_dir is None:
        raise ValueError("no git dir recorded for this tree: refusing to let git discover one")
    env = {"GIT_DIR": str(git_dir), "GIT_CEILING_DIRECTORIES": str(Path(git_dir).parent)}
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
        env["GIT_CEILING_DIRECTORIES"] = str(Path(work_tree).parent)
    return env


async def git(*args: str, cwd: Path | str, token: str | None = None, check: bool = True,
              stdin: bytes | None = None, env: dict[str, str] | None = None,
              profile: GitProfile | None = None) -> str:
    """Run `git args` in cwd; stdout as text. Raises GitError when check and it fails. Git that
    commits or reaches the git host is handed the operator's `profile`."""
    code, out, err = await run_git(*args, cwd=cwd, token=token, stdin=stdin, env=env, profile=profile)
    if check and code != 0:
        raise GitError(args, code, err)
    return out


async def run_git(*args: str, cwd: Path | str, token: str | None = None,
                  stdin: bytes | None = None, env: dict[str, str] | None = None,
                  profile: GitProfile | None = None) -> tuple[int, str, str]:
    code, out, err = await run_git_bytes(*args, cwd=cwd, token=token, stdin=stdin, env=env, profile=profile)
    return code, out.decode("utf-8", "replace"), err


async def git_bytes(*args: str, cwd: Path | str, stdin: bytes | None = None,
                    env: dict[str, str] | None = None, timeout_s: float | None = None) -> bytes:
    """`git` with stdout undecoded: file names are bytes, whatever their encoding. With
    `timeout_s`, a git still running then is killed and GitError raised (code -9)."""
    code, out, err = await run_git_bytes(*args, cwd=cwd, stdin=stdin, env=env, timeout_s=timeout_s)
    if code != 0:
        raise GitError(args, code, err)
    return out


async def run_git_bytes(*args: str, cwd: Path | str, token: str | None = None,
                        stdin: bytes | None = None, env: dict[str, str] | None = None,
                        timeout_s: float | None = None, profile: GitProfile | None = None
                        ) -> tuple[int, bytes, str]:
    """git's status, stdout and redacted stderr. Its stdout is read up to OUTPUT_CAP: a git that
    prints more is stopped there and fails (code KILLED) saying so."""
    out = await _run(args, cwd, token, stdin, env, timeout_s, profile, OUTPUT_CAP)
    if out.timed_out:  # a FIFO where git expects a file blocks it for ever
        return KILLED, b"", f"git {args[0]} did not finish in {timeout_s:.0f} s and was stopped"
    if out.cut:
        return KILLED, b"", f"git {args[0]} printed more than {OUTPUT_CAP} bytes and was stopped there"
    return out.code, out.stdout, redact(out.stderr.decode("utf-8", "replace"), token)


async def git_head(*args: str, cap: int, cwd: Path | str, env: dict[str, str] | None = None,
                   stdin: bytes | None = None) -> Capped:
    """The first `cap` bytes of what `git args` prints, for a caller that can use a part (and
    says it was cut when `.cut`); GitError when git fails otherwise."""
    out = await _run(args, cwd, None, stdin, env, None, None, cap)
    if out.code != 0 and not out.cut:
        raise GitError(args, out.code, redact(out.stderr.decode("utf-8", "replace")))
    return out


async def _run(args: tuple[str, ...], cwd: Path | str, token: str | None, stdin: bytes | None,
               env: dict[str, str] | None, timeout_s: float | None, profile: GitProfile | None, cap: int) -> Capped:
    full_env = git_env(token, profile)
    full_env.update(env or {})
    log.debug("git %s (in %s)", " ".join(args), cwd)
    return await run_capped(["git", *args], cap=cap, cwd=str(cwd), env=full_env, stdin=stdin, timeout_s=timeout_s)


def redact(text: str, *secrets: str | None) -> str:
    """git's output with the token (in any encoding the leak scanner knows) and token shapes masked."""
    return mask(text, [secret for secret in secrets if secret])
