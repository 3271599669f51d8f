"""The command line: the parser (:mod:`~emergence.cli.parser`), one module per subcommand
(:mod:`emergence.cli.commands`), the entry point (:mod:`~emergence.cli.entry_point`) and the
generated command reference (:mod:`~emergence.cli.command_reference`).

``emergence.cli:main`` is the ``emergence`` console script of ``pyproject.toml``.
"""

from emergence.cli.entry_point import main

__all__ = ["main"]
