"""The tests' real text is found in one place: the EMERGENCE_CORPORA folder first, then ../shared/corpora."""

import re
from pathlib import Path

import real_text

CHECKOUT = Path(__file__).resolve().parents[1]


def test_the_environment_variable_comes_first_and_a_missing_file_is_none(tmp_path, monkeypatch):
    (tmp_path / real_text.TINYSTORIES).write_text("Once upon a time.\n", encoding="utf-8")
    monkeypatch.setenv(real_text.CORPORA_VARIABLE, str(tmp_path))
    assert real_text.corpus_folders()[0] == tmp_path
    assert real_text.real_text(real_text.TINYSTORIES) == tmp_path / real_text.TINYSTORIES
    monkeypatch.setattr(real_text, "REPOSITORY", tmp_path / "nowhere" / "emergence")
    assert real_text.real_text(real_text.NOVELS) is None
    reason = real_text.missing_reason(real_text.NOVELS)
    assert real_text.CORPORA_VARIABLE in reason and str(tmp_path) in reason


def test_the_generated_fallback_is_text_with_blank_line_separated_stories(tmp_path):
    path = real_text.generated_stories(tmp_path)
    stories = path.read_text(encoding="utf-8").strip().split("\n\n")
    assert len(stories) == real_text.GENERATED_STORIES and all(len(story.split()) > 60 for story in stories)


def test_no_test_names_an_absolute_path_to_a_corpus():
    """A corpus is reached through the fixtures of tests/conftest.py, never through a path written in a test."""
    written = re.compile(r"""["'](/[^"']*|[^"']*\.\./shared[^"']*)(tinystories|novels)[^"']*["']|["']shared["']""", re.I)
    found = [f"{path.name}: {match.group(0)}" for path in sorted((CHECKOUT / "tests").glob("*.py"))
             if path.name != "real_text.py" for match in written.finditer(path.read_text(encoding="utf-8"))]
    assert found == []
