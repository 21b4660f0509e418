"""What a configuration variable's text must be: each kind says what is wrong with a text (None when
it is fine), parses a fine one, and has an example to show in a refusal. bot/config/table.py gives every
variable one kind; `config.check_all` runs them all once at the start of every command."""
from __future__ import annotations

import ipaddress
import math
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)


class Kind:
    """Free text: anything goes (the commands that use it check it where it is used)."""

    checked = False
    example = "text"

    def problem(self, text: str) -> str | None:
        return None

    def parse(self, text: str) -> Any:
        return text


class Whole(Kind):
    checked = True

    def __init__(self, low: int = 0, high: int | None = None, what: str = "a whole number", example: str = "1",
                 span: str | None = None):
        self.low, self.high, self.what, self.example = low, high, what, example
        self.span = span or (f"{low} or more" if high is None else f"{low}-{high}")

    def problem(self, text: str) -> str | None:
        try:
            number = int(text.strip())
        except ValueError:
            number = None
        if number is None or number < self.low or (self.high is not None and number > self.high):
            return f"not {self.what} ({self.span})"
        return None

    def parse(self, text: str) -> int:
        return int(text.strip())


class Number(Kind):
    checked = True

    def __init__(self, what: str = "a number of seconds", positive: bool = False, example: str = "1"):
        self.what, self.positive, self.example = what, positive, example

    def problem(self, text: str) -> str | None:
        try:
            number = float(text.strip())
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or number < 0 or (self.positive and number == 0):
            return f"not {self.what} ({'more than 0' if self.positive else '0 or more'})"
        return None

    def parse(self, text: str) -> float:
        return float(text.strip())


class Flag(Kind):
    checked = True
    example = "true"

    def problem(self, text: str) -> str | None:
        return None if text.strip().lower() in ("true", "false") else "not true or false"

    def parse(self, text: str) -> bool:
        return text.strip().lower() == "true"


class Choice(Kind):
    checked = True

    def __init__(self, values: tuple[str, ...], what: str, shown: str | None = None, fold: bool = False,
                 as_int: bool = False):
        self.values, self.what, self.fold, self.as_int = values, what, fold, as_int
        self.shown, self.example = shown or ", ".join(values), values[0]

    def problem(self, text: str) -> str | None:
        given = text.strip().lower() if self.fold else text
        return None if given in self.values else f"not {self.what} ({self.shown})"

    def parse(self, text: str) -> Any:
        return int(text) if self.as_int else text


class Url(Kind):
    """A URL of one of `schemes`; http(s) ones name a host."""

    checked = True

    def __init__(self, schemes: tuple[str, ...] = ("https", "http"), example: str = "https://bot.example.com"):
        self.schemes, self.example = schemes, example

    def problem(self, text: str) -> str | None:
        wanted = " or ".join(", ".join(f"{s}://" for s in self.schemes).rsplit(", ", 1))
        try:
            parts = urlsplit(text)
            fine = (parts.scheme in self.schemes and not any(c.isspace() for c in text)
                    and (bool(parts.hostname) or parts.scheme not in ("http", "https")) and _port_ok(parts.port))
        except ValueError:
            fine = False
        return None if fine else f"not a URL starting with {wanted}"


def _port_ok(port: int | None) -> bool:
    return port is None or 0 < port < 65536


def is_host(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
        return True
    except ValueError:
        return bool(_HOSTNAME.match(text))


class HostName(Kind):
    checked = True
    example = "127.0.0.1"

    def problem(self, text: str) -> str | None:
        return None if is_host(text) else "not a host name or IP address (no scheme, no port)"


class HostPort(Kind):
    checked = True
    example = "127.0.0.1:9464"

    def problem(self, text: str) -> str | None:
        host, _, port = text.strip().rpartition(":")
        fine = (not host or is_host(host)) and port.isdigit() and 0 < int(port) < 65536
        return None if fine else "not host:port (a port 1-65535)"


class Size(Kind):
    """As a repository's limits: bytes, or a number with KiB, MiB, GiB or TiB, 64MiB to 64GiB."""

    checked = True
    example = "1GiB"

    def problem(self, text: str) -> str | None:
        count = self.parse(text)
        return None if count is not None and 64 << 20 <= count <= 64 << 30 else \
            "not a size from 64MiB to 64GiB (bytes, or a number with KiB, MiB, GiB or TiB)"

    def parse(self, text: str) -> Any:
        return parse_size(text)


def parse_size(text: str) -> int | None:
    """Bytes, or a number with K, M, G or T (KiB, MiB, …: powers of 1024), as bytes; None if it is not one.
    `.github/bot.yml` limits are read the same way (bot/workspace/repo_config_model.py)."""
    match = _SIZE.match(text)
    if not match:
        return None
    unit = (match.group(2) or "B").upper().rstrip("B").rstrip("I")
    return int(float(match.group(1)) * 1024 ** " KMGT".index(unit or " "))


class ExistingPath(Kind):
    """A file (or folder) that is there to be read."""

    checked = True

    def __init__(self, folder: bool = False, example: str = "/path/to/file"):
        self.folder, self.example = folder, example

    def problem(self, text: str) -> str | None:
        path = Path(text).expanduser()
        if not path.exists():
            return "no such folder" if self.folder else "no such file"
        if self.folder != path.is_dir():
            return "not a folder" if self.folder else "not a file (a folder is there)"
        return None if os.access(path, os.R_OK) else "cannot be read by this user"

    def parse(self, text: str) -> Path:
        return Path(text)


class Folder(Kind):
    """A folder that is made when missing: only something else in its place is wrong."""

    checked = True
    example = "/var/lib/bot"

    def problem(self, text: str) -> str | None:
        path = Path(text).expanduser()
        return "not a folder (a file is there)" if path.exists() and not path.is_dir() else None

    def parse(self, text: str) -> Path:
        return Path(text)


class Pattern(Kind):
    checked = True

    def __init__(self, pattern: str, what: str, example: str):
        self.pattern, self.what, self.example = re.compile(pattern), what, example

    def problem(self, text: str) -> str | None:
        return None if self.pattern.fullmatch(text) else f"not {self.what}"
