"""Automations: agents that run without a mention, declared in `.github/bot.yml` (docs/automations.md)."""
