"""The import graph the layering tests read counts every import, wherever it stands: one inside a
function is as much a dependency as one at the top, so it cannot hide a cycle."""
from __future__ import annotations

from tests.architecture.imports import imported_names


def test_an_import_inside_a_function_is_an_edge(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("def check():\n    from sandbox.tier1 import find_bwrap\n    return find_bwrap()\n")
    assert imported_names(module) == {"sandbox.tier1"}


def test_an_import_inside_a_method_of_a_class_is_an_edge(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("class Probe:\n    def run(self):\n        import sandbox.egress\n")
    assert imported_names(module) == {"sandbox.egress"}


def test_only_top_level_imports_are_left_out_when_asked(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("import sandbox.base\n\ndef check():\n    from sandbox import preflight\n")
    assert imported_names(module, top_level_only=True) == {"sandbox.base"}
    assert imported_names(module) == {"sandbox.base", "sandbox.preflight"}
