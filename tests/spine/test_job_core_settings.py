"""The job's core receives the entry point's settings (or the values it needs) and never reads the
environment: each test points the environment one way and the settings it hands another."""
from __future__ import annotations

from bot.job import conversations, thread_text
from bot.workspace.worktrees import conversation_slug


def _elsewhere(tmp_path):
    """A data dir the test hands down, other than the one the environment names (tmp_path/data)."""
    return tmp_path / "handed"


def test_the_attachments_folder_is_made_in_the_data_dir_it_is_handed(tmp_path):
    folder = thread_text.attachments_dir(_elsewhere(tmp_path), "octo/repo#2")
    assert folder == _elsewhere(tmp_path) / "attachments" / conversation_slug("octo/repo#2")
    assert folder.is_dir() and not (tmp_path / "data" / "attachments").exists()


def test_a_cli_home_is_made_in_the_data_dir_it_is_handed(tmp_path):
    home = conversations.home_dir(_elsewhere(tmp_path), "octo/repo#2", "codex")
    assert home == _elsewhere(tmp_path) / "homes" / conversation_slug("octo/repo#2") / "codex"
    assert home.is_dir() and not (tmp_path / "data" / "homes").exists()
