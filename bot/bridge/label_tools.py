"""`add_labels`: the tool offered only when the run was granted labelling (an automation whose
`may:` has `label`, bot/automations/labels.py). It labels the one issue or pull request of the run,
and only with labels the repository already has: every name the agent gives is read through the
repository's labels (matched as GitHub matches them, regardless of case, and sent in the
repository's own spelling), at most `MAX_PER_CALL` names a call and `MAX_PER_RUN` labels a run.
Anything else is refused, nothing is applied, and the server records the refusal with its reason.
The bot never creates a label (GitHub's POST .../labels would create an unknown name: it is never
sent one).

    names = admit_names(["Bug"], ["bug", "feature"], already=set())   # -> ["bug"], or raises Refusal
"""
from __future__ import annotations

from collections.abc import Collection, Iterable

from bot.bridge.admission import Refusal
from bot.bridge.tool import CallContext, Labeler, Outcome, Tool, schema

MAX_NAME_CHARS = 50  # GitHub's longest label name
MAX_PER_CALL = 10
MAX_PER_RUN = 10
SHOWN_LABELS = 100  # the repository's labels named in an answer, at most
SHOWN_NAME_CHARS = 60  # an unknown name quoted back to the model, cut


def admit_names(asked: object, known: Iterable[str], *, already: Collection[str] = ()) -> list[str]:
    """The repository's own spelling of each name asked, deduplicated; Refusal when any name is
    not a string of 1 to MAX_NAME_CHARS characters naming one of `known`, or when there are more
    than MAX_PER_CALL names, or more than MAX_PER_RUN labels with those `already` added this run."""
    if not isinstance(asked, list) or not all(isinstance(name, str) for name in asked):
        raise Refusal("bad_args", "labels must be a list of label names.")
    if len(asked) > MAX_PER_CALL:
        raise Refusal("too_many_labels", f"at most {MAX_PER_CALL} labels a call; {len(asked)} were given.")
    spelled = {name.casefold(): name for name in known if 0 < len(name) <= MAX_NAME_CHARS}
    admitted: list[str] = []
    unknown: list[str] = []
    for name in asked:
        own = spelled.get(name.casefold()) if 0 < len(name) <= MAX_NAME_CHARS else None
        if own is None:
            unknown.append(name)
        elif own not in admitted:
            admitted.append(own)
    if unknown:
        shown = ", ".join(repr(name[:SHOWN_NAME_CHARS]) for name in unknown[:MAX_PER_CALL])
        raise Refusal("unknown_label", f"{shown} {'is not a label' if len(unknown) == 1 else 'are not labels'} of "
                                       f"this repository, and labels are never created; nothing was added. "
                                       f"{listing(spelled.values())}")
    total = set(already) | set(admitted)
    if len(total) > MAX_PER_RUN:
        raise Refusal("label_budget", f"a run may add at most {MAX_PER_RUN} labels; {len(set(already))} were "
                                      "added already. Nothing more was added.")
    return admitted


def listing(names: Iterable[str]) -> str:
    ordered = sorted(names, key=str.casefold)
    if not ordered:
        return "The repository has no labels."
    more = f" and {len(ordered) - SHOWN_LABELS} more" if len(ordered) > SHOWN_LABELS else ""
    return f"The repository's labels: {', '.join(ordered[:SHOWN_LABELS])}{more}."


def _labeler(ctx: CallContext) -> Labeler:
    if ctx.labels is None:  # the server offers the tool only with a labeler; never label nowhere
        raise Refusal("unknown_tool", "there is no add_labels tool in this run: it may not label.")
    return ctx.labels


async def _add_labels(ctx: CallContext, args: dict) -> Outcome:
    labeler = _labeler(ctx)
    known = await labeler.known()
    if not args["labels"]:
        return listing(known), {"labels": [], "listed": min(len(known), SHOWN_LABELS)}
    names = admit_names(args["labels"], known, already=labeler.added())
    now = await labeler.add(names)
    return (f"added {', '.join(names)}; the labels on it now: {', '.join(now) or 'none'}.",
            {"labels": names})


TOOLS: tuple[Tool, ...] = (
    Tool("add_labels",
         "Add labels to the issue or pull request you were called for (only that one). Only labels the "
         "repository already has are accepted, matched regardless of case; labels are never created. "
         f"At most {MAX_PER_CALL} a call and {MAX_PER_RUN} in all. Call it with an empty list to see the "
         "repository's labels.",
         schema({"labels": {"type": "array", "items": {"type": "string", "maxLength": MAX_NAME_CHARS},
                            "maxItems": MAX_PER_CALL, "description": "label names the repository has"}},
                ["labels"]), _add_labels, needs="labels"),
)
