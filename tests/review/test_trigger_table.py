"""One table of automatic triggers (bot/trigger_table.py): each trigger's name, its bot.yml switch
and its workflow events, read by the gate, the configuration model and the workflow generator."""
from __future__ import annotations

import pytest

from bot.cli import action_workflow
from bot.trigger_table import BY_NAME, TRIGGERS
from bot.workspace.repo_config import parse


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.name)
def test_each_switch_in_the_table_turns_on_only_its_trigger_in_bot_yml(trigger):
    config = parse(f"{trigger.section}:\n  {trigger.key}: true\n", source="bot.yml")
    assert [t.name for t in TRIGGERS if t.is_on(config)] == [trigger.name]


def test_the_workflow_generator_offers_the_tables_triggers_by_their_keys():
    assert action_workflow.TRIGGERS == tuple(t.key for t in TRIGGERS if t.in_workflow)


def test_the_workflow_subscribes_to_a_triggers_events_from_the_table():
    assert action_workflow.TRIGGER_EVENTS["labels"] == dict(BY_NAME["label"].events)


def test_the_gate_reads_the_table():
    from bot.job import gate
    assert not hasattr(gate, "SWITCHES") and gate.BY_NAME is BY_NAME


def test_a_trigger_whose_switch_bot_yml_lacks_is_refused_by_the_configuration_model():
    from bot.trigger_table import Trigger
    from bot.workspace import repo_config_model
    stray = Trigger("stray", "triggers.stray", {"issues": ("opened",)}, "true")
    with pytest.raises(TypeError, match="no triggers.stray"):
        repo_config_model.check_switches((stray,))
