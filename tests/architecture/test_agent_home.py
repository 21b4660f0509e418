"""One home per agent: outside adapters/, no module of the bot names one of the agents in its code
(a string literal that is not a docstring), so a fact about a CLI cannot be written down twice and
forgotten once. The modules below name something else that happens to share a word with an agent:
a provider's own API or product, or a configuration variable in the one table of them."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from adapters import base

ROOT = Path(__file__).resolve().parents[2]
SKIPPED_BEFORE = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL)
ELSEWHERE = {
    "bot/config/table.py": "the variables of one agent (BOT_OPENCODE_PROVIDER, BOT_CODEX_AUTH_FILE) and the default agent",
    "bot/relay/wire_apis/anthropic.py": "Anthropic's cheapest model (a Claude model's name), for the key test",
    "bot/relay/wire_apis/gemini.py": "Google's Gemini API, its record (its name, paths and cheapest model)",
    "bot/relay/wire_apis/responses.py": "ChatGPT's Codex backend (its paths), a Responses API",
    "bot/relay/reply_headers.py": "the rate-limit headers of ChatGPT's Codex backend",
    "bot/relay/chatgpt.py": "the ChatGPT login file the relay holds for Codex",
    "bot/relay/server.py": "the words of a rejected ChatGPT login (`codex login` makes a new one)",
    "bot/credentials/shapes.py": "the providers' key shapes (a Claude subscription token, a Gemini API key)",
    "bot/credentials/resolve.py": "the words of a rejected ChatGPT login at the terminal",
    "bot/cli/action.py": "the workflow generator's --claude-subscription flag and its default agent",
    "bot/cli/action_workflow.py": "the example workflows (one on a Claude subscription)",
}


def agent_words_in_code(path: Path) -> list[tuple[int, str]]:
    names = set(base.names())
    found, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.STRING and previous is not None and previous.type not in SKIPPED_BEFORE:
            if names & set(re.findall(r"[a-z]+", token.string.lower())):
                found.append((token.start[0], token.string[:60]))
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token
    return found


def test_no_module_outside_the_adapters_names_an_agent_in_its_code():
    named = {str(path.relative_to(ROOT)): agent_words_in_code(path) for path in sorted((ROOT / "bot").rglob("*.py"))}
    offenders = {path: words for path, words in named.items() if words and path not in ELSEWHERE}
    assert offenders == {}


def test_every_module_allowed_to_share_a_word_with_an_agent_still_does():
    stale = [path for path in ELSEWHERE if not agent_words_in_code(ROOT / path)]
    assert stale == []
