"""Admission: the path policy, byte caps and call budget of bot/admission.py."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bridge.admission import Admission, Refusal
from bot.workspace.repo_config import RepoConfig, RepoLimits


@pytest.fixture
def policy(tmp_path) -> Admission:
    root = tmp_path / "wt"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return Admission(root, max_file_bytes=100, max_episode_bytes=150, max_calls=2)


def refusal_code(policy: Admission, path: str) -> str:
    with pytest.raises(Refusal) as caught:
        policy.admit_path(path)
    return caught.value.code


def test_relative_path_is_admitted_inside_worktree(policy):
    """A plain relative path maps to the file under the worktree."""
    assert policy.admit_path("src/app.py") == policy.worktree / "src" / "app.py"


def test_in_sandbox_absolute_path_is_mapped_to_worktree(policy):
    """The agent sees the worktree at /workspace; that prefix maps back to the host path."""
    assert policy.admit_path("/workspace/src/app.py") == policy.worktree / "src" / "app.py"


def test_dotdot_is_refused_as_outside(policy):
    """`../outside` climbs out of the repository."""
    assert refusal_code(policy, "../outside") == "outside"


def test_dotdot_that_stays_inside_is_still_refused(policy):
    """`src/../app.py` is refused too: no `..` at all, whatever it resolves to."""
    assert refusal_code(policy, "src/../app.py") == "outside"


def test_absolute_host_path_is_refused(policy):
    """An absolute path not under the mount path is outside."""
    assert refusal_code(policy, "/etc/passwd") == "outside"


def test_git_config_is_refused(policy):
    """`.git/config` is git metadata, the bot's alone."""
    assert refusal_code(policy, ".git/config") == "git_dir"


def test_nested_git_dir_is_refused(policy):
    """A `.git` component anywhere (a submodule's) is refused."""
    assert refusal_code(policy, "vendor/lib/.git/HEAD") == "git_dir"


def test_symlink_escaping_worktree_is_refused(policy, tmp_path):
    """A symlink inside the worktree pointing outside cannot be written through."""
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", policy.worktree / "escape")
    assert refusal_code(policy, "escape/file.txt") == "outside"


def test_symlink_into_git_dir_is_refused(policy):
    """A symlink to .git/ is judged by where it resolves."""
    os.symlink(policy.worktree / ".git", policy.worktree / "innocent")
    assert refusal_code(policy, "innocent/config") == "git_dir"


def test_workflow_file_is_protected_by_default(policy):
    """`.github/workflows/x.yml` matches the default protected glob."""
    assert refusal_code(policy, ".github/workflows/x.yml") == "protected"


def test_protected_path_admitted_when_repo_allows(tmp_path):
    """A repository whose configuration drops the protection may change its workflows."""
    cfg = RepoConfig(protected_paths=())
    policy = Admission.from_repo_config(tmp_path, cfg)
    assert policy.admit_path(".github/workflows/x.yml").name == "x.yml"


def test_repo_config_protected_directory_covers_its_files(tmp_path):
    """A wildcard-free protected entry (`secrets/`) covers everything below it."""
    policy = Admission.from_repo_config(tmp_path, RepoConfig(protected_paths=("secrets/",)))
    assert refusal_code(policy, "secrets/key.pem") == "protected"


def test_repo_config_limits_cap_run_timeout(tmp_path):
    """The repository's timeout limit bounds the `run` tool's timeout."""
    policy = Admission.from_repo_config(tmp_path, RepoConfig(limits=RepoLimits(timeout_s=30)))
    assert policy.run_timeout_s == 30


def test_empty_path_is_refused(policy):
    """An empty path is a bad argument, not the repository root."""
    assert refusal_code(policy, "  ") == "bad_path"


def test_mount_root_itself_is_refused(policy):
    """`/workspace` is the repository root, not a file."""
    assert refusal_code(policy, "/workspace") == "outside"


def test_call_budget_refuses_after_max_calls(policy):
    """The third call of a two-call budget is refused."""
    policy.charge_call()
    policy.charge_call()
    with pytest.raises(Refusal) as caught:
        policy.charge_call()
    assert caught.value.code == "budget"


def test_file_over_per_file_cap_is_refused(policy):
    """A single write larger than the per-file cap is refused."""
    with pytest.raises(Refusal) as caught:
        policy.charge_bytes(policy.worktree / "a", 101)
    assert caught.value.code == "too_large"


def test_episode_quota_refuses_cumulative_writes(policy):
    """Writes under the per-file cap still add up to the episode quota."""
    policy.charge_bytes(policy.worktree / "a", 100)
    with pytest.raises(Refusal) as caught:
        policy.charge_bytes(policy.worktree / "b", 60)
    assert (caught.value.code, policy.bytes_written) == ("quota", 100)


_SEGMENTS = st.sampled_from(["a", "b", "..", ".", ".git", ".github", "workflows", "x.yml", "", "/",
                             "workspace", "~", "src"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_SEGMENTS, min_size=1, max_size=6))
def test_any_admitted_path_is_inside_and_not_git(tmp_path_factory, parts):
    """Whatever the agent asks for, an admitted path is under the worktree and outside .git/."""
    root = tmp_path_factory.mktemp("wt")
    policy = Admission(root)
    try:
        target = policy.admit_path("/".join(parts))
    except Refusal:
        return
    relative = target.relative_to(root.resolve())
    assert relative.parts and ".git" not in relative.parts
    assert not relative.as_posix().startswith(".github/workflows/")


