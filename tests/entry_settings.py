"""Tests that compose routes into an app of their own hand it its settings, as an entry point does."""
from __future__ import annotations

import os

from starlette.applications import Starlette

from bot.config import Settings
from bot.db import Database, connect


def handed(app: Starlette) -> Starlette:
    """`app` with the settings of the environment as it is now. Not `Settings.load`: these tests
    set only the part of an App the pages under test use (the OAuth client, say), which a whole
    service would refuse to start with."""
    app.state.settings = Settings(dict(os.environ))
    return app


def current() -> Settings:
    """The settings of the environment as it is now, for a test that builds a job context (or
    calls a module below the entry points) itself, as an entry point would hand them."""
    return Settings(dict(os.environ))


def database() -> Database:
    """The bot's database as an entry point with the environment's settings opens it."""
    return connect(settings=current())
