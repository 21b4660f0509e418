"""One episode of a real agent CLI in a tier-1 sandbox whose only way to a model is the relay: the
MCP bridge and the model channel around it, as a job sets them up. The caller starts the fake
provider and points the relay's upstream at it first."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from adapters import base as adapters
from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.episode.model_channel import model_channel
from bot.episode.runner import run_episode
from bot.record.recorder import Recorder
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.bridge.test_e2e_clis import AGENTS_DIR, make_worktree
from tests.entry_settings import current


@dataclass
class Relayed:
    result: object
    recorder: Recorder
    run_id: str
    invocation: adapters.Invocation
    config: SandboxConfig
    calls: list  # the relay's record of the model calls


async def relay_episode(agent: str, creds: adapters.Credentials, ctx: SimpleNamespace, root: Path, *,
                        prompt: str = "Say something.", cli_web_access: bool = False,
                        model: str | None = None) -> Relayed:
    """`cli_web_access`: the CLI offers its web tools while the repository's web access stays off
    (what a CLI that always sends them does). A `ctx` without settings gets the environment's."""
    if getattr(ctx, "settings", None) is None:  # the environment as the caller set it, as an entry point hands it
        ctx.settings = current()
    worktree = make_worktree(root)
    recorder = Recorder(root / "bot.db")
    run_id = recorder.start_run(agent=agent, conversation="octo/repo#12", sandbox_tier=1)
    kill = asyncio.Event()
    adapter = adapters.get(agent, current().operator_for(agent))
    spawner = Tier1Spawner(host=current().sandbox_host)
    config = SandboxConfig(workdir=worktree, home=root / "home", ro_binds=(AGENTS_DIR,),
                           allowed_hosts=adapter.default_allowed_hosts, limits=Limits(timeout_s=120),
                           tmpdir=root / "home" / ".tmp")
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=root / "scratch",
                            on_halt=lambda reason: kill.set()) as bridge, \
            model_channel(agent, adapter, creds, ctx, recorder, run_id, config,
                          on_stop=lambda reason: kill.set()) as channel:
        config.bridge_upstream = ("127.0.0.1", bridge.port)
        episode = adapters.Episode(prompt=prompt, workdir=config.mount_path, home=config.home,
                                   web_access=cli_web_access, model=model,
                                   bridge=bridge.bridge_for(spawner.inside_bridge_url(config)),
                                   base_url=channel.base_url, credentials=channel.credentials)
        invocation = adapter.command(episode)
        result = await run_episode(adapter, episode, spawner, config, cancel=kill,
                                   on_event=lambda event: recorder.attest(run_id, event),
                                   bridge_connected=bridge.connected)
        calls = list(channel.relay.calls)
    return Relayed(result, recorder, run_id, invocation, config, calls)
