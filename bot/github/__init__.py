"""GitHub's REST API as the bot uses it."""
