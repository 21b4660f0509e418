"""Make an agent's text safe to post as the bot: no hidden HTML comments (the bot's own state
markers could be forged, content hidden from readers) and no @mentions that would notify people.
Code is left as written: fenced blocks and inline code spans are neither rendered as HTML comments
nor as mentions, and a copied snippet must stay exact."""
from __future__ import annotations

import re

ZWSP = "\u200b"
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_MENTION = re.compile(r"(?<![\w@/`.])@(?=[A-Za-z0-9][A-Za-z0-9-]{0,38}\b)")


def defang(text: str) -> str:
    out, fence = [], None
    for line in (text or "").split("\n"):
        opener = _FENCE.match(line)
        if fence is None and opener:
            fence = opener.group(1)
        elif fence is not None:
            if opener and opener.group(1) == fence:
                fence = None
        else:
            line = _prose(line)
        out.append(line)
    return "\n".join(out)


def _prose(line: str) -> str:
    parts = line.split("`")
    for index in range(0, len(parts), 2):  # even parts lie outside inline code spans
        parts[index] = _MENTION.sub("@" + ZWSP, parts[index].replace("<!--", "<!" + ZWSP + "--"))
    return "`".join(parts)
