"""The agents' names and aliases, read several times per webhook delivery, are made once per
registry (adapters/base.py: `_tables`): they answer as reading the registry anew would, and a
registration or a substituted adapter is seen at once."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters import base
from adapters.codex import Codex


def canonical_read_anew(word: str) -> str:
    """`canonical` as it was: every agent in order, each adapter built and asked."""
    for name in base.names():
        if word == name or word in base.get(name).aliases:
            return name
    return word


WORDS = st.one_of(st.sampled_from([alias for name in base.names()
                                   for alias in (name, *base.get(name).aliases)] + ["", "gpt", "Codex"]),
                  st.text(max_size=12))


@settings(max_examples=300, deadline=None)
@given(word=WORDS)
def test_the_table_answers_as_the_registry_read_anew(word):
    assert base.canonical(word) == canonical_read_anew(word)


class Renamed(Codex):
    aliases = ("openai-codex",)


class Fifth(Codex):
    name = "fifth"
    aliases = ("codex-cli", "v")  # shares an alias with codex: the agent first in order keeps it


def test_a_substituted_adapter_answers_to_its_own_aliases_at_once(monkeypatch):
    assert base.canonical("codex-cli") == "codex"
    monkeypatch.setitem(base._REGISTRY, "codex", Renamed)
    assert (base.canonical("openai-codex"), base.canonical("codex-cli")) == ("codex", "codex-cli")
    monkeypatch.undo()
    assert (base.canonical("openai-codex"), base.canonical("codex-cli")) == ("openai-codex", "codex")


def test_a_registered_agent_comes_after_the_built_ins_and_a_shared_alias_stays_with_the_first(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "fifth", Fifth)
    assert base.names()[-1] == "fifth" and base.names()[:-1] == [n for n in base.names() if n != "fifth"]
    assert (base.canonical("v"), base.canonical("codex-cli")) == ("fifth", "codex")
    assert base.canonical("fifth") == canonical_read_anew("fifth") == "fifth"


def test_the_names_handed_out_are_a_copy():
    names = base.names()
    names.append("intruder")
    assert "intruder" not in base.names()
