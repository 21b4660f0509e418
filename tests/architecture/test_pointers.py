"""What the docs and the code's comments point at is there: every repository path the docs name
exists (and the function or class a `path.py:name` names is in that file), every relative link
leads to a file, and nothing points at design notes outside the repository."""
from __future__ import annotations

import re
from pathlib import Path

from tests.architecture.imports import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCED = re.compile(r"^```.*?^```", re.S | re.M)  # shell examples name other things (deploy/intake)
TOP = "bot|adapters|sandbox|tests|bench|docs|scripts|agents-cli|deploy"
PATH = re.compile(rf"(?<![\w./@-])((?:{TOP})/[\w./*-]*[\w/*])(?::([A-Za-z_][\w.]*))?")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
OUTSIDE = re.compile(r"DESIGN §|DESIGN\.md|(?:/work|\.\.)/shared/(?:DESIGN|reference)|reference/[\w-]+\.md|agent-clis\.md")
CODE = [p for package in ("bot", "adapters", "sandbox", "bench", "tests") for p in (ROOT / package).rglob("*.py")
        if "node_modules" not in p.parts]


def prose(doc: Path) -> str:
    return FENCED.sub("", doc.read_text())


def named_paths() -> list[tuple[str, str, str | None]]:
    return [(doc.name, m.group(1).rstrip("."), m.group(2)) for doc in DOCS for m in PATH.finditer(prose(doc))]


def test_every_repository_path_the_docs_name_exists():
    missing = [(doc, path) for doc, path, _ in named_paths() if not list(ROOT.glob(path))]
    assert missing == []


def test_every_name_a_docs_path_points_at_is_in_that_file():
    def holds(path: str, name: str) -> bool:
        return re.search(rf"\b{re.escape(name.split('.')[-1])}\b", (ROOT / path).read_text()) is not None

    missing = [(doc, f"{path}:{name}") for doc, path, name in named_paths()
               if name and (ROOT / path).is_file() and not holds(path, name)]
    assert missing == []


def test_every_relative_link_in_the_docs_leads_to_a_file():
    broken = [(doc.name, target) for doc in DOCS for target in LINK.findall(prose(doc))
              if "://" not in target and not target.startswith("mailto:") and not (doc.parent / target).exists()]
    assert broken == []


def test_no_doc_or_comment_points_at_notes_outside_the_repository():
    pointing = [str(path.relative_to(ROOT)) for path in DOCS + CODE
                if path != Path(__file__) and OUTSIDE.search(path.read_text(errors="replace"))]
    assert pointing == []
