"""Repositories on disk: mirrors, worktrees, the bot's git, effects."""
