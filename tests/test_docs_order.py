"""The documentation in a researcher's order: concepts first, a user-guide section for every
command, and no run time quoted on a reference page (times are dated in docs/notes/measurements.md or
recorded by each run)."""

import re

from package_layout import CHECKOUT

from emergence.cli.parser import build_parser
from emergence.cli.command_reference import _children

REFERENCE_PAGES = ("README.md", "docs/index.md", "docs/user_guide.md", "docs/concepts.md", "docs/validation_copy_head.md")
"""Pages that describe what the engine does, as opposed to dated notes (docs/notes/) and measurement pages."""

MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s(?:s|sec|seconds?|min|minutes?|h|hours?)\b(?![-_/\w])")
DATED_HEADING = re.compile(r"(?m)^#+ .*\b20\d\d-\d\d-\d\d\b")


def leaf_commands(parser=None, prefix: str = "emergence") -> list[str]:
    """Every command of the parser that runs something (``emergence validate posterior``, not ``validate``)."""
    children = _children(parser or build_parser())
    if not children:
        return [prefix]
    return [name for child, _ in children for name in leaf_commands(child, child.prog)]


def test_readme_links_concepts_first():
    links = MARKDOWN_LINK.findall((CHECKOUT / "README.md").read_text(encoding="utf-8"))
    into_docs = [link for link in links if link.startswith("docs/")]
    assert into_docs and into_docs[0] == "docs/concepts.md", into_docs[:3]


def test_the_user_guide_has_a_section_for_every_command():
    guide = (CHECKOUT / "docs" / "user_guide.md").read_text(encoding="utf-8")
    commands = leaf_commands()
    assert {"emergence checkpoints", "emergence validate posterior", "emergence demo"} <= set(commands)
    missing = [name for name in commands if not re.search(rf"(?m)^#+ `{re.escape(name)}`$", guide)]
    assert missing == []


def test_reference_pages_quote_no_run_time_and_keep_no_dated_notes():
    quoted = {}
    for page in REFERENCE_PAGES:
        text = (CHECKOUT / page).read_text(encoding="utf-8")
        found = DURATION.findall(text) + DATED_HEADING.findall(text)
        if found:
            quoted[page] = found
    assert quoted == {}


def test_the_time_and_heading_patterns_catch_what_they_are_for():
    assert DURATION.findall("full 1 min 46 s on the quiet machine; --quick 22 s, about 3 minutes") == \
        ["1 min", "46 s", "22 s", "3 minutes"]
    assert DURATION.findall("L = 256, 2 cores, `steps/<key>.json`, 10 s/it, 65 tokens, s_eta, (2s), 3s") == []
    assert DATED_HEADING.findall("## Linear attention (verdicts, 2026-12-04)\n") != []
