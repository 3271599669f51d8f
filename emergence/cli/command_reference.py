"""The command reference (``docs/commands.md``) rendered as Markdown from the real argument parser.

Every command and sub-command of :func:`emergence.cli.build_parser` gets a section: its summary,
its description, a synopsis and a table of its arguments (value, default, help).  The text is
built from the parser's actions, not from argparse's help formatter, so it depends neither on the
terminal's width nor on the formatting of a Python release: the same parser renders the same
bytes on every machine.  ``python tools/regenerate.py commands`` writes it and
``tests/test_command_reference.py`` fails when the committed page is stale.
"""

from __future__ import annotations

import argparse
import re
import textwrap

SYNOPSIS_WIDTH = 100
"""Columns at which the synopsis of a command is wrapped (fixed: not the terminal's)."""

HEADER = """\
# Command reference

Generated from the `emergence` argument parser by `python tools/regenerate.py commands`; do not
edit by hand (`tests/test_command_reference.py` fails when this page differs from a fresh
rendering).  What each command writes, with examples: [user guide](user_guide.md).  The
symbols in the option descriptions: [concepts](concepts.md).
"""


def _subparsers_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _value(action: argparse.Action) -> str:
    """The value an argument takes, written as in a usage line (empty for a flag)."""
    if action.nargs == 0:
        return ""
    metavar = _metavar(action)
    if isinstance(action, argparse._SubParsersAction) or action.nargs == argparse.PARSER:
        return f"{metavar} ..."
    if action.nargs is None:
        return metavar
    if action.nargs == argparse.OPTIONAL:
        return f"[{metavar}]"
    if action.nargs == argparse.ZERO_OR_MORE:
        return f"[{metavar} ...]"
    if action.nargs == argparse.ONE_OR_MORE:
        return f"{metavar} [{metavar} ...]"
    if action.nargs == argparse.REMAINDER:
        return "..."
    return " ".join([metavar] * int(action.nargs))


def _usage_item(action: argparse.Action) -> str:
    if not action.option_strings:
        return _value(action)
    item = " ".join(filter(None, (action.option_strings[0], _value(action))))
    return item if action.required else f"[{item}]"


def _synopsis(parser: argparse.ArgumentParser) -> str:
    items = [_usage_item(a) for a in parser._actions if a.help != argparse.SUPPRESS]
    optionals = [item for item, a in zip(items, parser._actions) if a.option_strings]
    positionals = [item for item, a in zip(items, parser._actions) if not a.option_strings]
    lines, line = [], parser.prog
    for item in [*optionals, *positionals]:  # wrapped between arguments, never inside one
        if len(line) + 1 + len(item) > SYNOPSIS_WIDTH:
            lines.append(line)
            line = "    " + item
        else:
            line += " " + item
    return "\n".join([*lines, line])


def _help(action: argparse.Action, prog: str) -> str:
    if not action.help:
        return ""
    values = {**vars(action), "prog": prog}
    values = {name: getattr(value, "__name__", value) for name, value in values.items()}
    if isinstance(values.get("choices"), (list, tuple)):
        values["choices"] = ", ".join(map(str, values["choices"]))
    return action.help % values


def _default(action: argparse.Action) -> str:
    if action.required and action.option_strings:
        return "required"
    default = action.default
    if action.nargs == 0 or default is None or default == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
        return ""
    return "" if default == "" else str(default)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text else ""


def _description(text: str | None) -> str:
    """A module docstring as Markdown paragraphs: reST roles and double backticks become code spans."""
    if not text:
        return ""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", textwrap.dedent(text).strip())
    text = text.replace("``", "`")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in re.split(r"\n\s*\n", text))


def _section(parser: argparse.ArgumentParser, summary: str | None, level: int) -> list[str]:
    lines = [f"{'#' * level} `{parser.prog}`", ""]
    description = _description(parser.description) or _sentence(summary)
    if description:
        lines += [description, ""]
    lines += ["```text", _synopsis(parser), "```", ""]
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            names = ", ".join(f"`{name}`" for name in action.choices)
            rows.append(f"| `{_metavar(action)}` | one of {names} | | see below |")
            continue
        name = ", ".join(f"`{option}`" for option in action.option_strings) or f"`{_metavar(action)}`"
        value = _code(_value(action)) if action.option_strings else ""
        default = _default(action)
        default = default if default == "required" else _code(default)
        rows.append(f"| {name} | {value} | {default} | {_cell(_help(action, parser.prog))} |")
    if rows:
        lines += ["| argument | value | default | description |", "|---|---|---|---|", *rows, ""]
    return lines


def _sentence(text: str | None) -> str:
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _children(parser: argparse.ArgumentParser) -> list[tuple[argparse.ArgumentParser, str | None]]:
    """Each sub-command's parser and its one-line summary (its ``help``), in the order registered."""
    subparsers = _subparsers_action(parser)
    if subparsers is None:
        return []
    summaries = {choice.dest: choice.help for choice in subparsers._choices_actions}
    return [(child, summaries.get(name)) for name, child in subparsers.choices.items()]


def _walk(parser: argparse.ArgumentParser, summary: str | None, level: int) -> list[str]:
    lines = _section(parser, summary, level)
    for child, child_summary in _children(parser):
        lines += _walk(child, child_summary, min(level + 1, 3))
    return lines


def command_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """Markdown for every command and sub-command of ``parser`` (default: the ``emergence`` command line)."""
    if parser is None:
        from emergence.cli.parser import build_parser

        parser = build_parser()
    contents = []
    for child, summary in _children(parser):
        contents.append(f"- [`{child.prog}`](#{_anchor(child.prog)}): {summary or ''}".rstrip(": "))
        for grandchild, grand_summary in _children(child):
            contents.append(f"  - [`{grandchild.prog}`](#{_anchor(grandchild.prog)}): {grand_summary or ''}".rstrip(": "))
    body = _walk(parser, None, 1)
    body[0] = "## `emergence`"  # the page's own heading is HEADER's
    text = "\n".join([HEADER, *contents, "", *body]).rstrip("\n") + "\n"
    return text


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading that is one code span: lower case, spaces to hyphens, punctuation dropped."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")
