"""Subcommand modules.  Each defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``."""

COMMAND_MODULES: tuple[str, ...] = (
    "emergence.commands.export_kernels",
    "emergence.commands.check",
    "emergence.commands.phase_diagram",
    "emergence.commands.scaling",
    "emergence.commands.derive",
    "emergence.commands.bench",
    "emergence.commands.basis",
    "emergence.commands.associate",
    "emergence.commands.predict_weights",
    "emergence.commands.validate",
    "emergence.commands.demo",
)
