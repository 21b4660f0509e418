"""action.yml against the adapters' declared Action inputs (as claude-code-action's
test/action-yml-wiring.test.ts holds its action.yml to its code): every credential input an adapter
declares is an input, reaches the bot step's env, is exported under its variable and unset; and
action.yml carries no credential input no adapter declares."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from adapters import base
from tests.relay.test_fail_closed import Fifth

ROOT = Path(__file__).resolve().parent.parent.parent
# the inputs that carry no agent's credential
GENERAL_INPUTS = {"github-token", "handle", "agent", "sandbox-tier", "python-version"}
EXPORT = re.compile(r'^\[ -n "\$INPUT_(\w+)" \] && export (\w+)="\$INPUT_(\w+)"$', re.M)
UNSET = re.compile(r"^unset (INPUT_\w+(?: INPUT_\w+)*)$", re.M)


def declared() -> dict[str, str]:
    """input name -> the variable it is exported as, over every adapter's declared inputs."""
    pairs: dict[str, str] = {}
    for name in base.names():
        inputs = base.get(name).action_inputs
        if inputs:
            pairs.update(dict([inputs.key] + ([inputs.subscription] if inputs.subscription else [])))
    return pairs


def wired(action: dict) -> dict[str, dict[str, str]]:
    """Where action.yml carries each credential input: its inputs, the bot step's env, the export
    and unset lines of its script, each as input-or-variable -> variable."""
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "bot")
    env = {v.removeprefix("${{ inputs.").removesuffix(" }}"): k.removeprefix("INPUT_")
           for k, v in step["env"].items() if k.startswith("INPUT_")}
    exports = {inner: variable for inner, variable, again in EXPORT.findall(step["run"]) if inner == again}
    unset = [name.removeprefix("INPUT_") for line in UNSET.findall(step["run"]) for name in line.split()]
    return {"inputs": {n: "" for n in set(action["inputs"]) - GENERAL_INPUTS}, "env": env,
            "exports": exports, "unset": {n: n for n in unset}}


def disagreements(action: dict, pairs: dict[str, str]) -> list[str]:
    found = wired(action)
    want = {"inputs": {i: "" for i in pairs}, "env": dict(pairs), "exports": {v: v for v in pairs.values()},
            "unset": {v: v for v in pairs.values()}}
    return [f"{where}: {key!r} is {found[where].get(key)!r}, declared {want[where].get(key)!r}"
            for where in want for key in sorted(set(want[where]) | set(found[where]))
            if found[where].get(key) != want[where].get(key)]


def action() -> dict:
    loaded: dict = yaml.safe_load((ROOT / "action.yml").read_text())
    return loaded


def test_action_yml_wires_exactly_the_credential_inputs_the_adapters_declare():
    assert disagreements(action(), declared()) == []


def test_each_declared_input_is_exported_as_a_variable_its_cli_reads():
    for name in base.names():
        inputs = base.get(name).action_inputs
        for _, variable in [inputs.key] + ([inputs.subscription] if inputs.subscription else []):
            assert variable in base.get(name).credential_env, (name, variable)


class Sixth(Fifth):
    name = "sixth"
    action_inputs = base.ActionInputs(("sixth-api-key", "SIXTH_API_KEY"))


def test_an_input_an_adapter_declares_but_action_yml_lacks_is_named(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "sixth", Sixth)
    assert disagreements(action(), declared()) == [
        "inputs: 'sixth-api-key' is None, declared ''", "env: 'sixth-api-key' is None, declared 'SIXTH_API_KEY'",
        "exports: 'SIXTH_API_KEY' is None, declared 'SIXTH_API_KEY'",
        "unset: 'SIXTH_API_KEY' is None, declared 'SIXTH_API_KEY'"]


def test_a_credential_input_no_adapter_declares_is_named():
    undeclared_gemini = {k: v for k, v in declared().items() if k != "gemini-api-key"}
    assert disagreements(action(), undeclared_gemini) == [
        "inputs: 'gemini-api-key' is '', declared None", "env: 'gemini-api-key' is 'GEMINI_API_KEY', declared None",
        "exports: 'GEMINI_API_KEY' is 'GEMINI_API_KEY', declared None",
        "unset: 'GEMINI_API_KEY' is 'GEMINI_API_KEY', declared None"]
