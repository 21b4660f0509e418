"""What a test started and should have ended: the processes still naming its folder."""
from __future__ import annotations

import time
from pathlib import Path

EXIT_DEADLINE_S = 30.0  # a killed sandbox's PID namespace ends just after its init: polled, bounded


def processes_naming(marker: str) -> list[str]:
    """Every process whose command line or environment holds `marker` (a test's own folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker.encode() in cmdline or marker.encode() in environ:
            shown = cmdline.replace(b"\0", b" ")[:160].decode("utf-8", "replace")
            found.append(f"{entry.name}: {shown}")
    return found


def left_running(marker: str) -> list[str]:
    """The processes naming `marker` once they have had EXIT_DEADLINE_S to end."""
    deadline = time.monotonic() + EXIT_DEADLINE_S
    while (alive := processes_naming(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive
