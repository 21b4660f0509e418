"""The bot's exceptions share one root, so "a failure the bot understood" is one `except BotError`
away from "a bug". Each keeps its standard base (RuntimeError, ValueError, …) as well, so code that
catches those still does. Names are distinct across the packages: one name, one meaning.

The tree below, with each class's module, is checked against the classes
(tests/architecture/test_error_tree.py): a new one is added here.

    BotError
    ├── MissingConfig            bot.config.table        a required variable is not set
    │   ├── PartialIdentity      bot.config.table        some of the App's variables are set, not all
    │   └── SettingsRefused      bot.config              variables whose text is not of their kind
    ├── DatabaseConfigError      bot.db                  BOT_DATABASE_URL names no usable database
    ├── CopyRefused              bot.db.copy             `bot db copy`'s target already holds rows
    ├── GitError                 bot.workspace.git       a git command failed
    ├── ConfigError              bot.workspace.repo_config   `.github/bot.yml` is invalid
    ├── CronError                bot.cron                a cron expression outside the five-field grammar
    ├── FireInputError           bot.automations.fire    a fire request's body or key is outside the allowlist
    │   └── BodyTooLarge         bot.automations.fire    a fire request's body over its bound
    ├── SecretError              bot.credentials.vault   the key store cannot be read or written
    ├── RotationError            bot.credentials.rotation    the key could not be rotated
    ├── InvalidCredential        bot.credentials.resolve a stored or pasted credential is unusable
    │   └── ShapeMismatch        bot.credentials.shapes  not the shape of the chosen credential kind
    ├── RecordNotStored          bot.record.event_log    the database refused the run events' writes
    ├── DownloadRefused          bot.github.thread       an attachment is not fetched
    ├── OutsideDiff              bot.review.diff_lines   a review comment the diff cannot carry
    ├── NotPosted                bot.review.post         the re-check before posting a review refused
    ├── RuleEditRefused          bot.review.learned      a maintainer's edit of a learned rule is outside its grammar
    ├── RulePullRefused          bot.review.learned_pull why an approved rule's pull request is not opened
    ├── Refusal                  bot.bridge.admission    a bridged call is refused (the model sees why)
    ├── ToolFailure              bot.bridge.tools        a bridged call failed while it ran
    │   └── _NotAFolder          bot.bridge.reads        a listing asked of a path that is no folder
    ├── LoginRefused             bot.relay.chatgpt       the ChatGPT login was not renewed
    ├── BodyRefused              bot.relay.body_policy   a request the relay answers itself
    ├── PriceTableError          bot.relay.pricing       the operator's price table is invalid
    ├── RelayBodyError           bot.relay.http_server   a relayed request's body cannot be had
    │   ├── RelayBodyTooLarge    bot.relay.http_server   the body is over the relay's cap (413)
    │   ├── RelayBodyMalformed   bot.relay.http_server   the request's framing or target is malformed (400)
    │   └── RelayClientGone      bot.relay.http_server   the CLI went away before the body's end
    ├── Unreadable               bot.relay.reservation   a request's output limit or count is not a number
    ├── SpecError                bot.intake.spec         a stored job spec this version cannot read
    ├── Stop                     bot.episode.stop        end the job now with a terminal text
    ├── SessionHomeTooLarge      bot.episode.session_home    a CLI's resume state is over its cap
    ├── NotYet                   bot.service.worker      a job cannot start yet (GitHub unreachable)
    ├── BackupError              bot.service.backup      the backup or restore did not happen
    ├── GitHubRefused            bot.settings.github     GitHub refused the settings page's call
    ├── SettingsRefusal          bot.settings.routes     a settings request is answered with a page
    ├── ManifestFailed           bot.settings.manifest   the manifest code did not become an App
    ├── AlreadyStored            bot.settings.manifest   an App is stored already
    ├── Malformed                bot.intake.payload      a signed payload lacks a field or has a wrong type
    ├── TooLarge                 bot.web.intake_body     a webhook body over the size limit
    ├── TooSlow                  bot.web.intake_body     a webhook body that did not arrive in time
    ├── Gone                     bot.web.intake_body     the sender hung up before the body was complete
    ├── RunPageRefusal           bot.web.run_page        a run page request is answered with a page
    ├── CoalescingRace           bot.web.review_push     other replicas kept winning a push's merge (503)
    ├── Misconfigured            bot.cli.action          the Action step cannot run (its result: StepOutcome)
    ├── CacheEntryUnusable       bot.cli.action_cache_entry  a restored Actions cache entry is discarded
    ├── WorkflowError            bot.cli.action_workflow the workflow cannot be written as asked
    ├── RunRefused               bot.cli.local_folder    `bot run` cannot start
    └── ReplayFileError          bot.cli.replay_file     the file is not a saved delivery
"""
from __future__ import annotations


class BotError(Exception):
    """A failure the bot understood and can explain; anything else is a bug."""
