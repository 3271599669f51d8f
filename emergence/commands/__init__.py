"""Subcommand modules.  Each defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``."""

COMMAND_MODULES: tuple[str, ...] = (
    "emergence.commands.export_kernels",
    "emergence.commands.check",
    "emergence.commands.bench",
    "emergence.commands.validate",
)
