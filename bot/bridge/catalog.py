"""Every tool the bridge offers, each one `Tool` object: name, description, schema and handler
together. The server lists and dispatches from here by name; adding a tool is one object below
(its work in tools.py or reads.py when it is more than a few lines), or in review_tools.py for a
tool offered only in a review run, or in label_tools.py for the tool offered only to a run that may
label (an automation's `may: [label]`).
"""
from __future__ import annotations

import asyncio

from bot.bridge import label_tools, reads, review_tools, tools
from bot.bridge.admission import Refusal
from bot.bridge.tool import PATH, CallContext, Outcome, Tool, schema


async def _read_thread(ctx: CallContext, args: dict) -> Outcome:
    return await tools.read_thread(ctx.read_thread, tools.THREAD_CAP)


async def _read_file(ctx: CallContext, args: dict) -> Outcome:
    return await asyncio.to_thread(reads.read_file, ctx.policy, args, ctx.read_dirs)


async def _list_files(ctx: CallContext, args: dict) -> Outcome:
    return await asyncio.to_thread(reads.list_files, ctx.policy, args)


async def _search(ctx: CallContext, args: dict) -> Outcome:
    return await reads.search(ctx.policy, args)


async def _save_file(ctx: CallContext, args: dict) -> Outcome:
    return tools.save_file(ctx.policy, args)


async def _edit_file(ctx: CallContext, args: dict) -> Outcome:
    return tools.edit_file(ctx.policy, args)


async def _delete_file(ctx: CallContext, args: dict) -> Outcome:
    return tools.delete_file(ctx.policy, args)


async def _run(ctx: CallContext, args: dict) -> Outcome:
    async with ctx.run_turn:  # parallel calls queue: each sandbox may hold its full caps
        ctx.refuse_if_halted()
        return await tools.run_command(ctx.policy, args, ctx.run_sandbox, ctx.scratch_root, ctx.track_run)


async def _report_progress(ctx: CallContext, args: dict) -> Outcome:
    shown = await ctx.progress.submit(args["markdown"])
    return ("shown" if shown else "queued (progress updates are throttled)"), {"chars": len(args["markdown"])}


TOOLS: tuple[Tool, ...] = (
    Tool("read_thread",
         "Read the GitHub conversation you were called from: the issue or pull request, its comments, "
         "and for a pull request its diff and review comments.", schema({}, []), _read_thread),
    Tool("read_file",
         "Read a text file of the repository, or one attached to the thread (by the absolute path the "
         "prompt lists): lines from offset (1-based, default 1), at most limit lines (default 2000) "
         "and 100 kB per call; the end says how to read on.",
         schema({"path": PATH, "offset": {"type": "integer", "description": "first line, from 1"},
                 "limit": {"type": "integer", "description": "how many lines"}}, ["path"]), _read_file),
    Tool("list_files",
         "List a folder of the repository (default: its root), or everything below it with recursive; "
         "folders end in /, symbolic links are shown, not followed.",
         schema({"path": {"type": "string", "description": "folder relative to the repository root"},
                 "recursive": {"type": "boolean", "description": "list everything below it"}}, []), _list_files),
    Tool("search",
         "Search the repository's text files for a regular expression (ripgrep syntax; an invalid one "
         "is searched as literal text). Returns path:line:text for each matching line.",
         schema({"pattern": {"type": "string", "description": "regular expression or text to find"},
                 "path": {"type": "string", "description": "folder or file to search (default: all)"},
                 "glob": {"type": "string", "description": "only files matching this glob, e.g. *.py"}},
                ["pattern"]), _search),
    # Not "write_file": Gemini CLI hides an MCP tool whose bare name is one of its own
    # excluded built-ins (write_file, replace, run_shell_command) in strict headless mode.
    Tool("save_file",
         "Create or overwrite a file in the repository with the given full content. This is the only "
         "way to create files; your own write tools are disabled.",
         schema({"path": PATH, "content": {"type": "string", "description": "the complete new file content"}},
                ["path", "content"]), _save_file),
    Tool("edit_file",
         "Replace one exact occurrence of old_string with new_string in a file. old_string must match "
         "exactly once; include surrounding lines to make it unique.",
         schema({"path": PATH, "old_string": {"type": "string", "description": "exact text to replace"},
                 "new_string": {"type": "string", "description": "replacement text"}},
                ["path", "old_string", "new_string"]), _edit_file),
    Tool("delete_file", "Delete a file from the repository.", schema({"path": PATH}, ["path"]), _delete_file),
    Tool("run",
         "Run a shell command (for example the test suite) in a fresh sandbox over the repository, "
         "from its root. Returns the exit code and the (possibly truncated) output. No network.",
         schema({"command": {"type": "string", "description": "a /bin/sh command line"},
                 "timeout_s": {"type": "number", "description": "seconds before it is killed (optional)"}},
                ["command"]), _run),
    Tool("report_progress",
         "Show a short markdown checklist of your progress to the people in the thread.",
         schema({"markdown": {"type": "string", "description": "a short markdown checklist"}}, ["markdown"]),
         _report_progress),
)


REVIEW_TOOLS = review_tools.TOOLS
LABEL_TOOLS = label_tools.TOOLS


def offered(review: bool, labels: bool = False) -> tuple[Tool, ...]:
    """The tools one episode lists, in this order: the review tools only in a review run, the label
    tool only in a run that may label."""
    granted = {"", *(("review",) if review else ()), *(("labels",) if labels else ())}
    return tuple(tool for tool in TOOLS + REVIEW_TOOLS + LABEL_TOOLS if tool.needs in granted)


def find(name: str) -> Tool | None:
    return next((tool for tool in offered(review=True, labels=True) if tool.name == name), None)


def check_arguments(name: str, args: dict) -> Tool:
    """The tool called; refused when there is none by that name or the arguments do not fit its
    JSON schema (the model sees what is wrong)."""
    tool = find(name)
    if tool is None:
        raise Refusal("unknown_tool", f"there is no tool {name!r}; the tools are {', '.join(t.name for t in TOOLS)}.")
    tool.check(args)
    return tool
