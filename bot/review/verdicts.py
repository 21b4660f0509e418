"""What a reply in one of the bot's review threads says about its finding: a declared grammar, read
from the reply's first non-blank line only. Everything the grammar does not declare says nothing.

    classify("Won't fix: the API requires it")      # DECLINE
    classify("this is not intended, please fix")     # REOPEN
    classify("> won't fix")                          # None: a quote, not a decision

    decline := [subject] decline-phrase ( end | [.!]+ end | separator explanation )
    reopen  := [subject] reopen-phrase ( end | any character that is not part of a word … )
    subject := this is | that is | it is | this was | it was | it's | that's
    separator := ":" | "." | "!" | ";" | " - " | " — " | " – "

Case, runs of whitespace and curly apostrophes do not matter. A first line that declines but also
asks for a fix in its explanation ("Won't fix: kidding, please fix") is not clear, so it
declines nothing. Nothing else counts: a quote (`> won't fix`), a phrase in code or emphasis, a
negation ("not intended"), a phrase after other words ("I think it's intended"). Whether the
person who wrote it may decide is asked of GitHub elsewhere (bot/review/signals.py).
"""
from __future__ import annotations

import re

DECLINE, REOPEN = "decline", "reopen"
MAX_BODY_CHARS = 8192  # only the first line is read; it starts within this much of the reply
MAX_LINE_CHARS = 500

DECLINE_PHRASES = (
    "won't fix", "wont fix", "won't-fix", "will not fix", "wontfix", "not going to fix",
    "not a bug", "not an issue", "not a problem",
    "intended", "intended behaviour", "intended behavior", "as intended", "working as intended",
    "works as intended", "intentional", "on purpose", "by design", "as designed", "false positive",
    "decline", "declined")
# a decline whose explanation names one of these is not clear ("Won't fix: kidding, please fix")
ASKS_TO_FIX = ("reopen", "reopened", "re-open", "re-opened", "please fix", "do fix", "fix this", "fix it",
               "not intended", "unintended", "still a bug", "still broken")
REOPEN_PHRASES = (*ASKS_TO_FIX, "a bug")
SUBJECTS = ("this is", "that is", "it is", "this was", "it was", "it's", "that's")


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_SUBJECT = rf"(?:(?:{_alternatives(SUBJECTS)}) )?"
_DECLINE = re.compile(rf"{_SUBJECT}(?:{_alternatives(DECLINE_PHRASES)})"
                      r"(?:[.!]*|(?:[.!:;]| [-—–]) ?(?P<explanation>.*))")
_REOPEN = re.compile(rf"{_SUBJECT}(?:{_alternatives(REOPEN_PHRASES)})(?:$|\W)")
_ASKS_TO_FIX = re.compile(rf"(?<!\w)(?:{_alternatives(ASKS_TO_FIX)})(?!\w)")


def classify(body: str) -> str | None:
    line = first_line(body)
    if line is None:
        return None
    declined = _DECLINE.fullmatch(line)
    if declined and not _ASKS_TO_FIX.search(declined.group("explanation") or ""):
        return DECLINE
    if _REOPEN.match(line):
        return REOPEN
    return None


def first_line(body: str) -> str | None:
    """The first non-blank line, lower-case, its whitespace runs made one space, ’ made '; bounded."""
    text = body[:MAX_BODY_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    for line in text.split("\n"):
        if line.strip():
            return " ".join(line[:MAX_LINE_CHARS].lower().replace("’", "'").split())
    return None
