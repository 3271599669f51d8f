"""``docs/commands.md`` is the command reference rendered from the real argument parser, and it is current."""

import os
import subprocess
import sys

from emergence.cli.parser import build_parser
from emergence.cli.command_reference import command_reference
from generated_files import CHECKOUT, assert_committed_equal_fresh, regenerate


def test_the_committed_command_reference_equals_a_fresh_rendering():
    assert_committed_equal_fresh(regenerate.command_reference_files(), "python tools/regenerate.py commands")


def test_every_command_and_option_of_the_parser_is_in_the_reference():
    text = command_reference()
    for heading in ("## `emergence demo`", "### `emergence validate copy-head`", "### `emergence derive copy-head`",
                    "### `emergence validate posterior`", "### `emergence validate leading-terms`"):
        assert heading in text
    assert "| `--attention` | `{linear,softmax}` | required |" in text
    assert "| `--architecture` | `{T,M}` | `T` |" in text  # derive copy-head: model T is the default


def test_a_planted_option_change_makes_the_rendering_differ():
    fresh = command_reference()
    parser = build_parser()
    demo = parser._subparsers._group_actions[0].choices["demo"]
    demo.add_argument("--planted", type=int, default=7, help="an option the committed page does not have")
    planted = command_reference(parser)
    assert planted != fresh and "| `--planted` | `PLANTED` | `7` |" in planted

    parser = build_parser()  # a changed default alone is seen too
    seed = next(a for a in parser._subparsers._group_actions[0].choices["demo"]._actions if a.dest == "seed")
    seed.default = 1
    assert command_reference(parser) != fresh


def test_the_rendering_does_not_depend_on_the_terminal_width():
    code = "from emergence.cli.command_reference import command_reference; import sys; sys.stdout.write(command_reference())"
    texts = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=CHECKOUT,
                            env={**os.environ, "COLUMNS": columns}).stdout
             for columns in ("20", "300")}
    assert texts == {command_reference()}
