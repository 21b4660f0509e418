"""`.github/bot.yml` parsing and validation (bot/repo_config.py)."""
from __future__ import annotations

import pytest

from bot.workspace import paths
from bot.workspace.repo_config import ConfigError, RepoConfig, parse

FULL = """\
default_agent: codex
allowed_agents: [codex, claude]
trigger_permissions: maintain
mode: native
protected_paths: [".github/**", "secrets/"]
limits:
  memory: 1GiB
  timeout: 5m
  pids: 256
egress_hosts: [example.com, .internal.example.org]
package_registries: [pypi, npm]
open_pull_requests: true
allow_fork_push: true
close_issue: false
"""


def test_empty_file_gives_defaults():
    """An empty bot.yml is the defaults: strict mode, workflows protected, write+ may trigger."""
    cfg = parse("")
    assert (cfg.mode, cfg.protected_paths, cfg.trigger_permissions) == (
        "strict", (".github/workflows/**",), ("write", "maintain", "admin"))


def test_full_file_sets_every_key():
    """Every documented key lands in the dataclass with units converted."""
    cfg = parse(FULL)
    assert cfg.default_agent == "codex" and cfg.allowed_agents == ("codex", "claude")
    assert cfg.trigger_permissions == ("maintain", "admin") and cfg.mode == "native"
    assert (cfg.limits.memory_bytes, cfg.limits.timeout_s, cfg.limits.pids) == (1 << 30, 300.0, 256)
    assert cfg.egress_hosts == ("example.com", ".internal.example.org")
    assert "files.pythonhosted.org" in cfg.registry_hosts()
    assert cfg.open_pull_requests and cfg.allow_fork_push and not cfg.close_issue


def test_permission_list_is_taken_exactly():
    """A list of levels names exactly who may trigger (here admins only)."""
    assert parse("trigger_permissions: [admin]").may_trigger("write") is False


def test_unknown_key_names_key_and_line():
    """A typo is an error pointing at its line, not silently ignored."""
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\nallowed_agent: [codex]\n")
    assert (err.value.key, err.value.line) == ("allowed_agent", 2)


def test_bad_nested_limit_names_dotted_key():
    """A bad value inside `limits` names `limits.<key>` and its own line."""
    with pytest.raises(ConfigError) as err:
        parse("limits:\n  memory: lots\n")
    assert (err.value.key, err.value.line) == ("limits.memory", 2)


def test_unknown_agent_is_refused():
    """An agent the bot does not know is an error listing the known ones."""
    with pytest.raises(ConfigError, match="one of: claude"):
        parse("default_agent: copilot")


def test_default_agent_outside_allowed_is_refused():
    """A default agent that is not allowed is a contradiction, reported."""
    with pytest.raises(ConfigError, match="not in allowed_agents"):
        parse("default_agent: gemini\nallowed_agents: [codex]\n")


def test_broken_yaml_reports_line():
    """A YAML syntax error carries the line of the problem."""
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\nprotected_paths: [a\n")
    assert err.value.line is not None and "not valid YAML" in str(err.value)


def test_non_boolean_flag_is_refused():
    """`open_pull_requests: sometimes` is not a boolean."""
    with pytest.raises(ConfigError, match="true or false"):
        parse("open_pull_requests: sometimes")


def test_wildcard_host_is_refused():
    """Egress hosts use the leading-dot form, not shell wildcards."""
    with pytest.raises(ConfigError, match="not a host name"):
        parse("egress_hosts: ['*.example.com']")


def test_error_comment_says_nothing_ran():
    """The comment text names the file, the line and that the run did not happen."""
    with pytest.raises(ConfigError) as err:
        parse("mode: loose")
    assert "did not run" in err.value.comment() and "line 1" in err.value.comment()


@pytest.mark.parametrize("path,pattern,expected", [
    (".github/workflows/ci.yml", ".github/workflows/**", True),
    (".github/workflows", ".github/workflows/**", False),
    ("a/b/c.lock", "**/*.lock", True),
    ("c.lock", "**/*.lock", True),
    ("src/c.lock", "*.lock", False),
    ("secrets/deep/key.pem", "secrets/", True),
    ("secretsx/key.pem", "secrets", False),
])
def test_protected_path_globs(path, pattern, expected):
    """`**` spans directories, `*` does not, a bare directory covers what is below it."""
    assert (paths.protected_by(path, [pattern]) is not None) is expected


def test_default_protects_workflows_only():
    """By default workflow files are protected and ordinary sources are not."""
    cfg = RepoConfig()
    assert cfg.protected(".github/workflows/x.yml") and cfg.protected("README.md") is None


def test_web_access_is_off_by_default_and_set_by_the_file():
    """`web_access` is false unless the file says true."""
    assert parse("").web_access is False and parse("web_access: true").web_access is True


def test_web_access_must_be_a_boolean():
    """`web_access: yes please` is an error naming the key, not a truthy string."""
    with pytest.raises(ConfigError) as err:
        parse("web_access: yes please\n")
    assert (err.value.key, err.value.line) == ("web_access", 1)


def test_budgets_are_off_by_default():
    assert parse("").budgets == {}


def test_budgets_take_every_operator_budget_key():
    """The keys mirror the operator's BOT_BUDGET_* variables, lower-cased without the prefix."""
    cfg = parse("budgets:\n  turn_tokens: 50000\n  turn_usd: 2.5\n  thread_usd: 10\n"
                "  requester_day_tokens: 1000000\n  installation_month_usd: 300\n")
    assert cfg.budgets == {"turn_tokens": 50000, "turn_usd": 2.5, "thread_usd": 10.0,
                           "requester_day_tokens": 1000000, "installation_month_usd": 300.0}


def test_an_unknown_budget_names_its_line():
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\nbudgets:\n  turn_tokens: 10\n  turn_dollars: 5\n")
    assert (err.value.key, err.value.line) == ("budgets.turn_dollars", 4)
    assert "installation_month_usd" in err.value.reason


def test_a_token_budget_must_be_a_whole_number():
    with pytest.raises(ConfigError) as err:
        parse("budgets:\n  thread_tokens: 2.5\n")
    assert (err.value.key, err.value.line) == ("budgets.thread_tokens", 2)


@pytest.mark.parametrize("value", ["-1", "lots", "true", ".nan"])
def test_a_money_budget_must_be_a_number_at_least_zero(value):
    with pytest.raises(ConfigError) as err:
        parse(f"budgets:\n  turn_usd: {value}\n")
    assert (err.value.key, err.value.line) == ("budgets.turn_usd", 2)


def test_budgets_must_be_a_mapping():
    with pytest.raises(ConfigError) as err:
        parse("budgets: 5\n")
    assert (err.value.key, err.value.line) == ("budgets", 1)


def test_the_schema_has_one_model_per_section_and_matches_repo_config():
    """Every top-level key of the pydantic schema is a RepoConfig field; sections are their own models."""
    from dataclasses import fields

    from bot.workspace.repo_config_model import BotYml, BudgetsSection, LimitsSection
    assert set(BotYml.model_fields) == {f.name for f in fields(RepoConfig)} - {"source"}
    assert (BotYml.model_fields["limits"].annotation, BotYml.model_fields["budgets"].annotation) == (
        LimitsSection, BudgetsSection)


def test_the_budgets_section_mirrors_the_operator_budget_variables():
    """`budgets.<cap>` keys are exactly the BOT_BUDGET_* variables, lower-cased without the prefix."""
    from bot.workspace.repo_config_model import BUDGET_KEYS, BudgetsSection
    assert list(BudgetsSection.model_fields) == list(BUDGET_KEYS)


def test_an_unknown_limit_names_its_line():
    with pytest.raises(ConfigError) as err:
        parse("limits:\n  memory: 1GiB\n  speed: 3\n")
    assert (err.value.key, err.value.line) == ("limits.speed", 3) and "unknown limit" in err.value.reason


def test_a_section_that_is_not_a_mapping_names_its_line():
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\nlimits: 5\n")
    assert (err.value.key, err.value.line) == ("limits", 2) and "must be a mapping" in err.value.reason


def test_a_list_key_given_a_number_names_its_line():
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\negress_hosts: 5\n")
    assert (err.value.key, err.value.line, err.value.reason) == ("egress_hosts", 2, "must be a list of strings")


def test_of_several_errors_the_first_in_the_file_is_reported():
    """The schema's field order is not the file's: the error nearest the top is the one named."""
    with pytest.raises(ConfigError) as err:
        parse("web_access: maybe\nmode: loose\n")
    assert (err.value.key, err.value.line) == ("web_access", 1)


def test_a_non_string_key_is_an_unknown_key():
    with pytest.raises(ConfigError) as err:
        parse("mode: strict\n1: x\n")
    assert (err.value.key, err.value.line) == ("1", 2) and "unknown key" in err.value.reason
