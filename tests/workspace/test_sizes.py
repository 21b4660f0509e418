"""One size parser: `.github/bot.yml` limits and the operator's BOT_LIMIT_* variables read a size
the same way."""
from __future__ import annotations

import pytest

from bot.config.kinds import Size, parse_size
from bot.workspace.repo_config_model import size


@pytest.mark.parametrize(("text", "count"), [("512MiB", 512 << 20), ("2GiB", 2 << 30), ("2g", 2 << 30),
                                             ("67108864", 64 << 20), ("1.5 GiB", 3 << 29)])
def test_bot_yml_and_the_environment_read_a_size_the_same_way(text, count):
    assert size(text) == Size().parse(text) == parse_size(text) == count


@pytest.mark.parametrize("text", ["lots", "12 parsecs", "-1GiB", ""])
def test_text_that_is_no_size_is_none(text):
    assert parse_size(text) is None
