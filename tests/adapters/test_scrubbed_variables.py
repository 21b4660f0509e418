"""The suite's scrubbed environment (tests/conftest.py) comes from the adapters' declarations: no
test sees a credential of the operator's shell that some adapter would read."""
from __future__ import annotations

from adapters import base
from tests import conftest
from tests.relay.test_fail_closed import Fifth

# what tests/conftest.py scrubbed when it kept its own list
SCRUBBED_BEFORE = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                   "CLAUDE_CODE_OAUTH_TOKEN", "GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY",
                   "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET")


def test_the_suite_scrubs_every_credential_variable_an_adapter_declares():
    for name in base.names():
        adapter = base.get(name)
        kinds = [variable for kind in adapter.credential_kinds for variable in kind.env]
        declared = {*adapter.credential_env, *adapter.operator_variables(), *kinds}
        assert declared <= set(conftest._SCRUBBED), name


def test_the_suite_still_scrubs_every_variable_its_own_list_named():
    assert set(SCRUBBED_BEFORE) <= set(conftest._SCRUBBED)


def test_a_registered_adapters_credential_variable_is_scrubbed(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "fifth", Fifth)
    assert "FIFTH_API_KEY" in conftest.scrubbed_variables()
