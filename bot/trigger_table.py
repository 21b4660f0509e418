"""The automatic triggers, one row each: the name a job records (`automatic.kind` in the queue, so
never renamed), the `.github/bot.yml` switch that turns it on, and the workflow events it comes
by. The intake (bot/intake/triggers.py, gate.py), the repository configuration's model
(bot/workspace/repo_config_model.py) and the Action's workflow generator (bot/cli/action_workflow.py)
all read this table. It sits in the kernel because the configuration model, below the intake,
needs it too.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Trigger:
    name: str  # the job's `automatic.kind`
    switch: str  # `section.key` in .github/bot.yml; the key is also `bot action workflow --triggers`' name
    events: Mapping[str, tuple[str, ...]]  # workflow event -> the activity types it comes by
    workflow_if: str  # what the workflow's `if:` lets through ({not_draft}: the draft condition)
    in_workflow: bool = True  # offered by `bot action workflow`

    @property
    def section(self) -> str:
        return self.switch.split(".")[0]

    @property
    def key(self) -> str:
        return self.switch.split(".")[1]

    def is_on(self, config: object) -> bool:
        """Whether a parsed bot.yml (anything with the sections as attributes) turns it on."""
        return bool(getattr(getattr(config, self.section), self.key))


def _events(**events: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(events)


TRIGGERS = (
    Trigger("label", "triggers.labels", _events(issues=("labeled",), pull_request=("labeled",)),
            "startsWith(github.event.label.name, 'bot:')"),
    Trigger("assignment", "triggers.assignment", _events(issues=("assigned",), pull_request=("assigned",)),
            "github.event.action == 'assigned'"),
    Trigger("review_requested", "triggers.review_requested", _events(pull_request=("review_requested",)),
            "github.event.action == 'review_requested'"),
    Trigger("pull_request_opened", "triggers.pull_request_opened",
            _events(pull_request=("opened", "ready_for_review")),
            "(github.event_name == 'pull_request'{not_draft}\n"
            "            && (github.event.action == 'opened' || github.event.action == 'ready_for_review'))"),
    # a push to a reviewed pull request; the Action's workflow does not offer it yet
    Trigger("synchronize", "reviews.on_push", _events(pull_request=("synchronize",)),
            "github.event.action == 'synchronize'", in_workflow=False),
)
BY_NAME = MappingProxyType({trigger.name: trigger for trigger in TRIGGERS})
