"""The bot's exceptions share one root, so "a failure the bot understood" is one `except BotError`
away from "a bug". Each keeps its standard base (RuntimeError, ValueError, …) as well, so code that
catches those still does. Names are distinct across the packages: one name, one meaning.

    BotError
    ├── MissingConfig            bot.config            a required variable is not set
    ├── ConfigError              bot.workspace.repo_config   `.github/bot.yml` is invalid
    ├── GitError                 bot.workspace.git     a git command failed
    ├── SecretError              bot.credentials.vault the key store cannot be read or written
    ├── PriceTableError          bot.relay.pricing     the operator's price table is invalid
    ├── GitHubRefused            bot.settings.github   GitHub refused the settings page's call
    ├── SettingsRefusal          bot.settings.routes   a settings request is answered with a page
    ├── DownloadRefused          bot.github.thread     an attachment is not fetched
    ├── Refusal                  bot.bridge.admission  a bridged call is refused (the model sees why)
    ├── ToolFailure              bot.bridge.tools      a bridged call failed while it ran
    ├── InvalidCredential        bot.credentials.resolve   a stored or pasted credential is unusable
    ├── NotYet                   bot.service.worker    a job cannot start yet (GitHub unreachable)
    ├── Misconfigured            bot.cli.action        the Action step cannot run (its result: StepOutcome)
    └── Stop                     bot.job.context       end the job now with a terminal text
"""
from __future__ import annotations


class BotError(Exception):
    """A failure the bot understood and can explain; anything else is a bug."""
