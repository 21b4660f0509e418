"""The mechanics of one CLI turn: its runner and stdout, its session home and resume state, its
model channel, its loaders and disk caps, its CLI version and the honesty checks of its result.
Nothing here knows a GitHub thread; the job (bot/job) drives it."""
