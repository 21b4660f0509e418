"""Fixtures for the tier-1 tests: a bot-like data dir, a runner, loopback servers, a TLS cert."""
from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

AGENTS_DIR = Path(__file__).resolve().parents[2] / "agents-cli"


@dataclass
class Ran:
    rc: int
    out: str
    err: str
    outcome: dict
    egress: list

    @property
    def text(self) -> str:
        return self.out + self.err

    def reasons(self) -> list[str]:
        return [d.reason for d in self.egress]


@pytest.fixture(scope="session", autouse=True)
def compiled_launcher() -> Path | None:
    """The compiled layer launcher, built before any test copies the sandbox package or runs it as
    another user (who could not write its build folder); a start would build it too."""
    from sandbox import launcher
    return launcher.find()


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """A data dir laid out like the bot's, with secrets an agent must never see."""
    data = tmp_path / "data"
    (data / "homes" / "conv-a" / "claude").mkdir(parents=True)
    (data / "homes" / "conv-a" / "claude" / "credentials.json").write_text("conv-a-token")
    (data / "homes" / "conv-b" / "claude").mkdir(parents=True)
    (data / "worktrees" / "conv-b").mkdir(parents=True)
    (data / "worktrees" / "conv-b" / "README.md").write_text("hello from the worktree\n")
    (data / "secret.key").write_bytes(b"master-key-material")
    (data / "bot.db").write_bytes(b"SQLite format 3\x00")
    return data


@pytest.fixture
def config(data_dir) -> SandboxConfig:
    return SandboxConfig(workdir=data_dir / "worktrees" / "conv-b",
                         home=data_dir / "homes" / "conv-b" / "claude",
                         limits=Limits(timeout_s=30, memory_bytes=256 << 20, pids=128))


@pytest.fixture
def run(config):
    """Run a shell command in a fresh tier-1 sandbox; returns what happened."""

    async def _run(script: str, spawner: Tier1Spawner | None = None, env: dict | None = None,
                   **changes) -> Ran:
        cfg = replace(config, **changes)
        proc = await (spawner or Tier1Spawner(host=current().sandbox_host)).start(cfg, ["sh", "-c", script], env or {})
        out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        rc = await proc.wait()
        return Ran(rc, out.decode(errors="replace"), err.decode(errors="replace"), proc.outcome(),
                   list(proc.egress))

    return _run


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for localhost / 127.0.0.1 and its key."""
    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> None:
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        writer.close()


@pytest.fixture
async def http_server():
    """Start a loopback HTTP(S) server answering every request with `body`; yields its port."""
    servers = []

    async def _start(body: bytes, tls: tuple[Path, Path] | None = None) -> int:
        context = None
        if tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
        server = await asyncio.start_server(lambda r, w: _answer(r, w, body), "127.0.0.1", 0,
                                            ssl=context)
        servers.append(server)
        return server.sockets[0].getsockname()[1]

    yield _start
    for server in servers:
        server.close()
