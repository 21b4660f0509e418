"""Running git for the bot: no prompts, no hooks, no user config, the token only in the env.

The installation token reaches git through a credential helper defined in GIT_CONFIG_*
environment variables; the helper reads the token from BOT_GIT_TOKEN at the moment git
asks. Nothing with the token is ever written to a URL, a config file, argv or a log.
"""
from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

TOKEN_ENV = "BOT_GIT_TOKEN"
# A shell function, not a file: `git config` sees only this text, never the token.
_CREDENTIAL_HELPER = ('!f() { test "$1" = get || exit 0; echo username=x-access-token; '
                      f'echo "password=${TOKEN_ENV}"; }}; f')
_SAFE_CONFIG = (
    ("credential.helper", ""),  # drop any helper from elsewhere before ours
    ("credential.helper", _CREDENTIAL_HELPER),
    ("core.hooksPath", "/dev/null"),
    ("core.askPass", ""),
    ("gc.auto", "0"),  # gc is run on purpose, never as a side effect of a fetch under a lock
    ("protocol.ext.allow", "never"),
    ("fetch.fsckObjects", "false"),
    ("advice.detachedHead", "false"),
    ("init.defaultBranch", "main"),
    ("commit.gpgSign", "false"),
)

# how the operator's host reaches github.com (proxies, private CAs), never credentials
_PASSED_THROUGH = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                   "GIT_SSL_CAINFO", "SSL_CERT_FILE", "SSL_CERT_DIR")


class GitError(RuntimeError):
    """A git command failed; the message carries git's stderr, with the token redacted."""

    def __init__(self, args: tuple[str, ...], code: int, stderr: str):
        self.code, self.stderr = code, stderr
        super().__init__(f"git {' '.join(args[:2])} failed ({code}): {stderr.strip()[-800:]}")


@dataclass
class Identity:
    name: str
    email: str


def bot_identity() -> Identity:
    from bot import config

    handle = config.handle()
    return Identity(config.env("BOT_GIT_NAME", f"{handle}[bot]"),
                    config.env("BOT_GIT_EMAIL", f"{handle}[bot]@users.noreply.github.com"))


def git_env(token: str | None = None, identity: Identity | None = None) -> dict[str, str]:
    """A scrubbed environment for git: system/global config ignored, our settings injected."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
           "GIT_SSH_COMMAND": "ssh -oBatchMode=yes"}
    env.update({name: os.environ[name] for name in _PASSED_THROUGH if os.environ.get(name)})
    env["GIT_CONFIG_COUNT"] = str(len(_SAFE_CONFIG))
    for index, (key, value) in enumerate(_SAFE_CONFIG):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    if token:
        env[TOKEN_ENV] = token
    who = identity or bot_identity()
    env.update(GIT_AUTHOR_NAME=who.name, GIT_AUTHOR_EMAIL=who.email,
               GIT_COMMITTER_NAME=who.name, GIT_COMMITTER_EMAIL=who.email)
    return env


async def git(*args: str, cwd: Path | str, token: str | None = None, check: bool = True,
              stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """Run `git args` in cwd; stdout as text. Raises GitError when check and it fails."""
    code, out, err = await run_git(*args, cwd=cwd, token=token, stdin=stdin, env=env)
    if check and code != 0:
        raise GitError(args, code, err)
    return out


async def run_git(*args: str, cwd: Path | str, token: str | None = None,
                  stdin: bytes | None = None, env: dict[str, str] | None = None
                  ) -> tuple[int, str, str]:
    full_env = git_env(token)
    full_env.update(env or {})
    log.debug("git %s (in %s)", " ".join(args), cwd)
    proc = await asyncio.create_subprocess_exec(
        "git", *args, cwd=str(cwd), env=full_env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate(stdin)
    return proc.returncode, out.decode("utf-8", "replace"), redact(err.decode("utf-8", "replace"), token)


def redact(text: str, *secrets: str | None) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
