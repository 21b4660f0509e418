"""A session id is a value of its CLI's own id grammar: every real id the CLIs printed matches it,
an id that does not is never taken from their output, and the resume argv is built so that even an
unchecked id cannot become an option (real Codex: a planted `--config` spawns no program)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adapters import base
from adapters.base import InvalidSessionId, check_session_id
from tests.adapters.helpers import episode, parse_all

AGENTS = tuple(base.names())  # the registry: every adapter
TRANSCRIPTS = Path("/work/shared/data/cli-transcripts")
LOCAL_TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "cli"
# What each CLI printed in the recorded streams (and the pre-assigned id of --session-id).
REAL_IDS = {"claude": ("ab6bb313-2e8a-46dc-a533-79b1b94eca64", "11111111-2222-4333-8444-555555555555"),
            "codex": ("01a226c8-5628-7ce3-97ad-7c0a5240b239", "01a226ca-519a-72c0-b305-e3044d81f724"),
            "opencode": ("ses_dd937982affeqagaWBh1l4x2I3", "ses_dd9375482ffeiFZFQQmH5XAgKr"),
            "gemini": ("55d8d4ca-d607-4357-a5fa-55503ea98a39", "11111111-2222-4333-8444-555555555555")}
VALID = {agent: ids[0] for agent, ids in REAL_IDS.items()}
HOSTILE = ("--config=mcp_servers.pwn.command=\"/bin/sh\"", "-c", "-cnotify=[\"sh\"]", "--last",
           "latest", "", " " + VALID["claude"], VALID["claude"] + "\n", VALID["claude"].upper(),
           "../" + VALID["claude"], "ses_dd937982affeqagaWBh1l4x2I3 --fork")
# The line of each CLI's stream that carries its session id, with the id as {id}.
SESSION_LINE = {
    "claude": '{{"type":"system","subtype":"init","session_id":{id},"tools":[],"mcp_servers":[]}}',
    "codex": '{{"type":"thread.started","thread_id":{id}}}',
    "opencode": '{{"type":"step_start","sessionID":{id},"part":{{}}}}',
    "gemini": '{{"type":"init","session_id":{id},"model":"auto"}}',
}


def _session_line(agent: str, session_id: str) -> bytes:
    return SESSION_LINE[agent].format(id=json.dumps(session_id)).encode()


def _transcript_ids(agent: str) -> set[str]:
    folder = TRANSCRIPTS if TRANSCRIPTS.is_dir() else LOCAL_TRANSCRIPTS
    lines = [line for path in folder.glob(f"{agent}-*.jsonl") for line in path.read_bytes().splitlines()]
    return {e.session_id for e in parse_all(agent, lines) if e.session_id}


@pytest.mark.parametrize("agent", AGENTS)
def test_every_session_id_a_cli_printed_matches_its_grammar(agent):
    """The grammar is the CLI's own: each id in the recorded streams is accepted."""
    seen = _transcript_ids(agent) | set(REAL_IDS[agent])
    assert seen and all(check_session_id(base.get(agent), value) is None for value in seen)


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("value", HOSTILE)
def test_an_option_or_other_text_is_not_a_session_id(agent, value):
    """An option, a picker word, padding, a newline or another case is refused with a clear error."""
    with pytest.raises(InvalidSessionId, match=f"not a {agent} session id"):
        check_session_id(base.get(agent), value)


def test_a_non_text_value_is_not_a_session_id():
    """A number or a list from a hostile JSON file is refused, not stringified."""
    with pytest.raises(InvalidSessionId):
        check_session_id(base.get("claude"), ["ab6bb313-2e8a-46dc-a533-79b1b94eca64"])


@pytest.mark.parametrize("agent", AGENTS)
def test_one_clis_id_is_not_anothers(agent):
    """OpenCode's ses_ ids and the others' UUIDs do not cross."""
    other = VALID["claude"] if agent == "opencode" else VALID["opencode"]
    with pytest.raises(InvalidSessionId):
        check_session_id(base.get(agent), other)


@pytest.mark.parametrize("agent", AGENTS)
def test_an_id_the_cli_prints_outside_its_grammar_is_not_kept(agent, tmp_path):
    """A session line whose id is an option is kept as an event, without the id, and the Result
    names no session, so it is never stored in the session map."""
    adapter = base.get(agent)
    events = adapter.parse(_session_line(agent, "--config=x"))
    assert events and all(e.session_id is None for e in events)
    result = adapter.finish(episode(tmp_path), events, 0, "", "answer")
    assert result.session_id is None


@pytest.mark.parametrize("agent", AGENTS)
def test_an_id_the_cli_prints_in_its_grammar_is_kept(agent, tmp_path):
    """The check takes nothing from an honest stream."""
    adapter = base.get(agent)
    events = adapter.parse(_session_line(agent, VALID[agent]))
    assert adapter.finish(episode(tmp_path), events, 0, "", "answer").session_id == VALID[agent]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_resume_id_is_one_argument_no_parser_reads_as_an_option(agent, tmp_path):
    """Even an id that bypassed every check is `--flag=value` or follows `--`: no argument of the
    argv is the id on its own where an option could start."""
    value = "--config=mcp_servers.pwn.command=\"/bin/sh\""
    argv = base.get(agent).command(episode(tmp_path, resume_session=value)).argv
    assert value not in argv[:argv.index("--")] if "--" in argv else value not in argv
    assert any(arg == value or arg.endswith("=" + value) for arg in argv)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_valid_id_still_resumes(agent, tmp_path):
    """The resume flag carries the id whole."""
    argv = base.get(agent).command(episode(tmp_path, resume_session=VALID[agent])).argv
    assert any(arg == VALID[agent] or arg.endswith("=" + VALID[agent]) for arg in argv)


def test_an_adapter_without_a_grammar_resumes_nothing():
    """A new CLI that forgets to declare its id grammar fails closed: no id is valid for it."""
    class Forgetful(base.CliAdapter):
        name = "forgetful"

    with pytest.raises(InvalidSessionId):
        check_session_id(Forgetful(), VALID["claude"])


PLANTED_MCP = '--config=mcp_servers.pwn={{command="/bin/sh",args=["-c","echo ran > {sentinel}"]}}'


@pytest.mark.e2e
@pytest.mark.sandbox
def test_real_codex_treats_a_planted_config_id_as_an_id_and_runs_no_program(tmp_path):
    """The payload that once spawned a program (a session id that is Codex's own `--config`
    adding an MCP server) reaches the real Codex as a session id: the turn ends (the positive
    signal) and the planted program never ran."""
    from tests.adapters.test_e2e_clis import Sandboxed
    from tests.fakes.provider import FakeProvider

    home = tmp_path / "home" / "codex"
    sentinel = "$HOME/PLANTED-RAN"
    with FakeProvider() as fake:
        result = asyncio.run(Sandboxed(tmp_path, fake).turn(
            "codex", "Continue", resume=PLANTED_MCP.format(sentinel=sentinel)))
    assert result.exit_code is not None
    assert not (home / "PLANTED-RAN").exists(), result.stderr_tail
