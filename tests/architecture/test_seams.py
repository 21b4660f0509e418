"""The seams of a job are typed: a mode, the thread and the surface are Protocols every
implementation has all the members of, the Job holds no `Any`, and no code asks a mode or
a thread with getattr whether it has a member (a member the caller needs is on the Protocol)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx

from bot.github import client
from bot.github.thread import GitHubThread
from bot.job import modes
from bot.job.context import Job, Mode
from bot.job.tracking import GitHubSurface, Surface
from tests.architecture.imports import parsed, project_modules
from tests.fakes.thread import quiet_thread

PROBES = ("getattr", "hasattr")
SEAMS = ("mode", "thread")


def test_the_job_context_declares_no_field_as_any():
    assert {name: kind for name, kind in Job.__annotations__.items() if re.search(r"\bAny\b", kind)} == {}


def test_the_github_mode_has_every_step_of_a_mode():
    assert isinstance(modes.GitHubMode(quiet_thread()), Mode)


def test_the_local_mode_has_every_step_of_a_mode():
    assert isinstance(modes.LocalMode(Path(".")), Mode)


async def test_the_github_thread_has_every_member_the_jobs_use():
    async with httpx.AsyncClient() as http:
        assert isinstance(client.Thread(client.RetryingAPI(http, base_url="https://api.github.com"), "o/r", 1), GitHubThread)


async def test_the_github_surface_is_a_surface():
    async with httpx.AsyncClient() as http:
        assert isinstance(GitHubSurface(client.Thread(client.RetryingAPI(http, base_url="https://api.github.com"), "o/r", 1)), Surface)


def probes() -> list[str]:
    found = []
    for name, path in project_modules().items():
        for node in ast.walk(parsed(path)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROBES
                    and node.args and ast.unparse(node.args[0]).split(".")[-1] in SEAMS):
                found.append(f"{name}: {ast.unparse(node)}")
    return found


def test_no_mode_or_thread_is_probed_with_getattr():
    assert probes() == []
