"""A throwaway PostgreSQL server for the tests: Debian's `postgresql` binaries, a cluster made by
initdb in a temporary directory, listening on a Unix socket only, run by `nobody` (the server
refuses to run as root), removed when the session ends."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

UNPRIVILEGED = 65534  # nobody / nogroup


def bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _as_server_user(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups"]
    return subprocess.run(prefix + argv, check=True, capture_output=True, text=True, **kwargs)


class Cluster:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="bot-pg-"))
        self.data, self.socket = self.root / "data", self.root / "socket"
        self.socket.mkdir()
        if os.geteuid() == 0:
            for path in (self.root, self.socket):
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        os.chmod(self.root, 0o755)

    def start(self) -> None:
        _as_server_user([str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "bot",
                         "--no-sync", "-E", "UTF8", "--locale", "C"])
        options = (f"-k {self.socket} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                   f"-c full_page_writes=off -c max_connections=400")
        _as_server_user([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "60",
                         "-l", str(self.root / "server.log"), "start"])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://bot@/{database}?host={self.socket}"

    def new_database(self) -> str:
        """A fresh, empty database on the cluster; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            _as_server_user([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"])
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
