"""README.md, docs/, the benchmark results and the source's docstrings and comments speak of the engine: dates,
machines, commands and results, never of how the work was organised (closing notes, issue numbers, sessions,
helpers, machines that were or were not lent).

History belongs in CHANGELOG.md, which this test does not scan.  Technical uses of the same words stay
allowed: a pytest session, session-scoped fixtures, import-linter's ``session_options``, helper functions.
"""

import re
from pathlib import Path

import pytest

from package_layout import CHECKOUT

DETERMINER = r"(?:this|that|the|a|an|one|each|every|another|other|previous|next|last|later|earlier|first|second|third|my|our)"

ORGANISATIONAL = re.compile(
    "|".join((
        r"closing notes?",
        r"issues (?:stops|show|all|list)\b",
        r"\bwas lent|\bwere lent|\blent\b",
        r"other sessions",
        r"to fit the session",
        r"\bissues? #?[0-9]+",
        r"(?<![&\w/])#[0-9]+\b",  # #27: an issue number (not an HTML entity, not a URL fragment)
        rf"\b{DETERMINER} sessions?\b(?![-_](?:scoped|options|fixture))",  # 'the second session', 'other sessions'
        r"\bsessions? (?:of|on) 20[0-9]{2}-",  # 'the sessions of 2026-12-02'
        r"\b(?:by|from|with) (?:a|the|one|two|three|four) helpers?\b(?! (?:function|module|class|method|script))",
        r"\b(?:two|three|four|five) helpers\b",
        r"\bhelper (?:sessions?|agents?|developers?)\b",
        r"\bmust-shows?\b",
        r"\bother developers\b|\blead developer\b|\bposterior developer\b",
    )),
    re.IGNORECASE,
)
"""Phrases that describe how the work was organised rather than the engine."""


SOURCE_FOLDERS = ("base", "theory", "numerics", "validation", "benchmarks", "emergence", "tools", "scripts", "tests", ".ci")
"""Folders whose code is read beside the docs: every ``.py`` and ``.sh`` file in them (and ``.ci/run``) is scanned."""


def scanned_files(root: Path) -> list[Path]:
    """README.md, every text file under docs/ (generated pages included: their generators must not write
    such phrases either) and benchmarks/RESULTS.md."""
    files = [root / "README.md", root / "benchmarks" / "RESULTS.md"]
    files += sorted(path for path in (root / "docs").rglob("*") if path.is_file() and path.suffix in {".md", ".json", ".txt"})
    return [path for path in files if path.exists()]


def scanned_sources(root: Path) -> list[Path]:
    """The code of :data:`SOURCE_FOLDERS` (links into the top-level folders not followed twice), this test's
    own file left out: it holds the phrases as planted examples."""
    files = []
    for folder in SOURCE_FOLDERS:
        if (root / folder).is_dir():
            files += [path for path in (root / folder).rglob("*")
                      if path.is_file() and (path.suffix in {".py", ".sh"} or path.name == "run")
                      and not any(part.is_symlink() for part in [path, *path.parents] if root in part.parents)
                      and "__pycache__" not in path.parts]
    return sorted(path for path in files if path.name != Path(__file__).name)


def organisational_phrases(paths) -> list[str]:
    """``path:line: phrase`` for every organisational phrase in ``paths``."""
    found = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            found += [f"{path}:{number}: {match.group(0)!r}" for match in ORGANISATIONAL.finditer(line)]
    return found


def test_readme_and_docs_speak_of_the_engine():
    files = scanned_files(CHECKOUT)
    assert CHECKOUT / "README.md" in files and CHECKOUT / "docs" / "concepts.md" in files
    assert organisational_phrases(files) == []


def test_docstrings_and_comments_speak_of_the_engine():
    files = scanned_sources(CHECKOUT)
    assert CHECKOUT / "validation" / "copy_task" / "free_energy.py" in files and CHECKOUT / ".ci" / "run" in files
    assert not any("emergence/validation" in str(path.relative_to(CHECKOUT)) for path in files)  # links not walked
    assert organisational_phrases(files) == []


def test_a_planted_phrase_in_a_docstring_fails_the_scan(tmp_path):
    (tmp_path / "numerics").mkdir()
    (tmp_path / "numerics" / "solver.py").write_text('"""The solver (issue 35, item 2)."""\n', encoding="utf-8")
    assert organisational_phrases(scanned_sources(tmp_path)) == [f"{tmp_path / 'numerics' / 'solver.py'}:1: 'issue 35'"]


def test_the_history_lives_in_a_changelog():
    text = (CHECKOUT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text and re.search(r"(?m)^## \[Unreleased\]$", text)


@pytest.mark.parametrize("planted", [
    "Measured on 2026-12-04 (numbers in the closing note of that date, `issues stops`).",
    "Not run this round (no GPU machine was lent).",
    "shared with other sessions;",
    "1000 Adam steps (fewer than at L = 32 to fit the session).",
    "r = 1 so λ = 1/L (issue 12; `r=0` gives the earlier λ = 1)",
    "Following Issue 25, the theory was not tuned",
    "as in #27",
    "Tested in the second session, and confirmed.",
    "than the partial run of the previous session",
    "Measured during the sessions of 2026-12-02 and 2026-12-03.",
    "Done by a helper in its own worktree.",
    "One lead developer and three helpers merged into main.",
    "C passes every must-show.",
    "while six other developers were running tests",
])
def test_a_planted_phrase_fails_the_scan(tmp_path, planted):
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# emergence\n\nA clean line.\n", encoding="utf-8")
    (tmp_path / "docs" / "notes" / "page.md").write_text(f"Dated: 2026-12-05.\n{planted}\n", encoding="utf-8")
    found = organisational_phrases(scanned_files(tmp_path))
    assert len(found) >= 1 and all(":2: " in line and "page.md" in line for line in found), found


@pytest.mark.parametrize("technical", [
    "the in-memory pass helpers one chunk at a time",
    "see the helper function `relabelled_inner`",
    "a pytest session runs the default suite; a session-scoped fixture builds it once",
    "import-linter reads `session_options` from pyproject.toml",
    "the tokenizer's session state",
    "windows drawn at random with `--seed`; the machine's load average",
    "an issue of numerical stability",
    "Developer-only regeneration; one developer script in the checkout",
    "[link](page.md#corpus-pipeline) and &#8201; spaces",
])
def test_technical_words_pass_the_scan(tmp_path, technical):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(f"{technical}\n", encoding="utf-8")
    assert organisational_phrases(scanned_files(tmp_path)) == []
