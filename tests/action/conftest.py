"""`bot action` fixtures: a recorded event payload written where the runner would put it, a fake
GitHub REST API that accepts the workflow's token, and the runner's environment files."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.fakes.github import FakeGitHub

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "action"
REPO = "Codertocat/Hello-World"
WORKFLOW_TOKEN = "ghs_workflowtokenworkflowtoken0000"


def payload(name: str, body: str | None = None, **fields) -> dict:
    """A recorded webhook payload, deep-copied, with the comment's body (and other fields) replaced."""
    data = copy.deepcopy(json.loads((FIXTURES / f"{name}.json").read_text()))
    item = data.get("comment") or data.get("issue")
    if body is not None:
        item["body"] = body
    item.update(fields)
    return data


class Runner:
    """What a GitHub-hosted runner provides to a step: env vars and environment files."""

    def __init__(self, root: Path, monkeypatch):
        self.root, self.monkeypatch = root, monkeypatch
        self.output, self.summary = root / "output.txt", root / "summary.md"
        self.output.touch()
        self.summary.touch()
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_OUTPUT", str(self.output))
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(self.summary))
        monkeypatch.setenv("GITHUB_TOKEN", WORKFLOW_TOKEN)

    def event(self, name: str, data: dict) -> None:
        path = self.root / "event.json"
        path.write_text(json.dumps(data))
        self.monkeypatch.setenv("GITHUB_EVENT_NAME", name)
        self.monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))

    def outputs(self) -> dict[str, str]:
        """Parse $GITHUB_OUTPUT the way the runner does (name<<DELIM ... DELIM)."""
        lines, found = self.output.read_text().split("\n"), {}
        index = 0
        while index < len(lines):
            if "<<" in lines[index]:
                name, delimiter = lines[index].split("<<", 1)
                end = lines.index(delimiter, index + 1)
                found[name] = "\n".join(lines[index + 1:end])
                index = end
            index += 1
        return found


@pytest.fixture
def github(monkeypatch):
    with FakeGitHub() as fake:
        fake.tokens[WORKFLOW_TOKEN] = 0
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1, title="Spelling error in the README file")
        fake.add_pull(REPO, 2, title="Update the README with new information.")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        yield fake


@pytest.fixture
def runner(tmp_path, monkeypatch):
    root = tmp_path / "runner"
    root.mkdir()
    return Runner(root, monkeypatch)
