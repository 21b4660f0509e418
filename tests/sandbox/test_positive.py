"""What must keep working inside tier 1: the worktree, the bridge, operator-allowed egress."""
from __future__ import annotations

import json
import shutil

import pytest

from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox


async def test_worktree_readable_at_stable_path(run):
    """The worktree is readable at /workspace, which is also the working directory."""
    ran = await run("pwd; cat README.md")
    assert ran.out == "/workspace\nhello from the worktree\n"


async def test_home_is_writable_and_persists(run, config):
    """The episode's CLI home is read-write and its files persist on the host."""
    ran = await run('mkdir -p "$HOME/.config" && echo state > "$HOME/.config/session" && echo $HOME')
    assert ran.out.strip() == str(config.home)
    assert (config.home / ".config" / "session").read_text() == "state\n"


async def test_bridge_reached_at_inside_port(run, http_server):
    """The host's MCP bridge is reachable inside at http://127.0.0.1:8765 (NO_PROXY path)."""
    port = await http_server(b"mcp-bridge-ok")
    ran = await run('curl -sS --max-time 10 "$BRIDGE_URL"', env={"BRIDGE_URL": "http://127.0.0.1:8765/mcp"},
                    bridge_upstream=("127.0.0.1", port))
    assert ran.out == "mcp-bridge-ok"
    assert ran.egress == []


def test_inside_bridge_url_is_fixed_loopback(config):
    """The bridge URL handed to the CLI is the inside listener, whatever the host port."""
    cfg = type(config)(**{**config.__dict__, "bridge_upstream": ("127.0.0.1", 40123)})
    assert Tier1Spawner(host=current().sandbox_host).inside_bridge_url(cfg) == "http://127.0.0.1:8765/mcp"
    assert Tier1Spawner(host=current().sandbox_host).inside_bridge_url(config) is None


async def test_operator_gateway_reached_through_proxy(run, http_server, tls_files, config):
    """An operator-allowed exact host:port (a local HTTPS server) is reached through the proxy."""
    port = await http_server(b"hello over tls", tls=tls_files)
    shutil.copy(tls_files[0], config.workdir / "ca.pem")
    ran = await run(f"curl -sS --max-time 10 --cacert ca.pem -x http://127.0.0.1:3128 --noproxy '' "
                    f"https://localhost:{port}/", gateways=(f"localhost:{port}",))
    assert ran.out == "hello over tls"
    [decision] = ran.egress
    assert (decision.allowed, decision.host, decision.port, decision.sni) == (True, "localhost", port,
                                                                               "localhost")
    assert decision.address == "127.0.0.1"
    assert decision.bytes_up > 0 and decision.bytes_down > 0


async def test_loopback_gateway_relayed_at_same_url(run, http_server):
    """A loopback gateway (the fake provider) answers inside at the same http://127.0.0.1:PORT."""
    port = await http_server(b"fake-provider")
    ran = await run(f"curl -sS --max-time 10 http://127.0.0.1:{port}/v1/models",
                    gateways=(f"127.0.0.1:{port}",))
    assert ran.out == "fake-provider"


async def test_egress_log_has_one_json_line_per_decision(run, tmp_path):
    """Each proxy decision is written to the run's egress log as one JSON line."""
    log = tmp_path / "egress.jsonl"
    curl = "curl -s -o /dev/null --max-time 5 -x http://127.0.0.1:3128 --noproxy ''"
    await run(f"{curl} https://example.com/; {curl} http://example.com/", egress_log=log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["host"], x["allowed"], x["reason"]) for x in lines] == [
        ("example.com", False, "blocked-by-allowlist"),
        ("http://example.com/", False, "only-connect-allowed")]


async def test_proxy_environment_set_inside(run):
    """The child sees the proxy variables pointing at the inside listener."""
    ran = await run("echo $HTTPS_PROXY $HTTP_PROXY $NO_PROXY $NODE_USE_ENV_PROXY $TMPDIR")
    assert ran.out.split() == ["http://127.0.0.1:3128", "http://127.0.0.1:3128",
                               "127.0.0.1,localhost,::1", "1", "/tmp"]


async def test_node_git_python_work_inside(run):
    """node, git, python3 and sh all run inside the skeleton."""
    ran = await run("node -e 'console.log(1+1)' && git --version && python3 -c 'print(3)' && echo sh")
    lines = ran.out.splitlines()
    assert lines[0] == "2" and lines[1].startswith("git version") and lines[2:] == ["3", "sh"]


async def test_listener_injection_through_owner_userns_fork(run, http_server, monkeypatch):
    """The unprivileged path (fork, join the netns's owner userns, pass fds back) also wires the bridge."""
    from sandbox import inject

    def no_privilege(child_pid, ports):
        raise PermissionError("forced: take the unprivileged path")

    monkeypatch.setattr(inject, "_inject_from_thread", no_privilege)
    port = await http_server(b"bridge-via-fork")
    ran = await run("curl -sS --max-time 10 http://127.0.0.1:8765/mcp", bridge_upstream=("127.0.0.1", port))
    assert ran.out == "bridge-via-fork"


async def test_concurrent_sandboxes_each_reach_their_own_bridge(run, http_server):
    """Runs side by side each get their own 127.0.0.1:8765, wired to their own bridge."""
    import asyncio
    ports = [await http_server(f"bridge-{i}".encode()) for i in range(3)]
    results = await asyncio.gather(*(
        run("curl -sS --max-time 10 http://127.0.0.1:8765/mcp", bridge_upstream=("127.0.0.1", port))
        for port in ports))
    assert [r.out for r in results] == ["bridge-0", "bridge-1", "bridge-2"]


async def test_probe_binds_a_binary_installed_outside_usr(tmp_path):
    """probe() of a CLI installed in its own folder (BOT_<AGENT>_BIN) can run it."""
    tool = tmp_path / "opt-cli" / "mycli"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho mycli 1.2.3\n")
    tool.chmod(0o755)
    rc, output = await Tier1Spawner(host=current().sandbox_host).probe([str(tool), "--version"])
    assert (rc, output) == (0, "mycli 1.2.3\n")
