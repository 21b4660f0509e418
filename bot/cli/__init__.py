"""Entry points: the `bot` command and its subcommands."""
