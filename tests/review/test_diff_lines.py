"""The commentable lines of a unified diff, per side, as GitHub decides them."""
from __future__ import annotations

import pytest

from bot.review.diff_lines import DiffLines, OutsideDiff, parse_patch

PATCH = ("@@ -1,4 +1,5 @@\n def add(a, b):\n-    return a - b\n+    # the sum\n+    return a + b\n \n"
         "@@ -20,3 +21,3 @@ def sub(a, b):\n x = 1\n-y = 2\n+y = 3\n z = 4\n\\ No newline at end of file")
FILES = [{"filename": "app.py", "patch": PATCH}, {"filename": "logo.png"}]


def test_right_side_holds_added_and_context_lines_in_new_numbering():
    diff = parse_patch("app.py", PATCH)
    assert [sorted(h.right) for h in diff.hunks] == [[1, 2, 3, 4], [21, 22, 23]]


def test_left_side_holds_deleted_and_context_lines_in_old_numbering():
    diff = parse_patch("app.py", PATCH)
    assert [sorted(h.left) for h in diff.hunks] == [[1, 2, 3], [20, 21, 22]]


def test_a_line_in_the_diff_is_accepted():
    DiffLines.from_files(FILES).check("app.py", "RIGHT", 3)
    DiffLines.from_files(FILES).check("app.py", "LEFT", 2)


def test_a_line_outside_the_diff_is_refused_with_the_lines_that_are_allowed():
    with pytest.raises(OutsideDiff) as refused:
        DiffLines.from_files(FILES).check("app.py", "RIGHT", 10)
    assert "line 10 of app.py" in str(refused.value) and "1-4, 21-23" in str(refused.value)


def test_a_range_across_two_hunks_is_refused():
    with pytest.raises(OutsideDiff, match="not in one hunk"):
        DiffLines.from_files(FILES).check("app.py", "RIGHT", 22, start_line=3)


def test_a_range_inside_one_hunk_is_accepted():
    DiffLines.from_files(FILES).check("app.py", "RIGHT", 4, start_line=2)


def test_a_file_not_in_the_pull_request_is_refused_naming_the_changed_files():
    with pytest.raises(OutsideDiff, match="not changed by this pull request.*app.py"):
        DiffLines.from_files(FILES).check("other.py", "RIGHT", 1)


def test_a_binary_file_is_refused_as_having_no_text_diff():
    with pytest.raises(OutsideDiff, match="no text diff"):
        DiffLines.from_files(FILES).check("logo.png", "RIGHT", 1)


def test_an_unknown_side_is_refused():
    with pytest.raises(OutsideDiff, match="side must be RIGHT"):
        DiffLines.from_files(FILES).check("app.py", "MIDDLE", 1)


def test_no_newline_marker_is_not_a_line():
    diff = parse_patch("app.py", PATCH)
    assert 24 not in diff.hunks[1].right and 23 not in diff.hunks[1].left
