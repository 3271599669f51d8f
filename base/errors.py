"""The one exception family the command line reports as a one-line error.

Every layer raises :class:`EmergenceError` (or a subclass) for bad user input: invalid
sizes, empty corpora, unavailable backends, diverging training.  Anything else is a bug
and keeps its traceback.
"""


class EmergenceError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""


class InvalidSizeError(EmergenceError, ValueError):
    """A model or corpus size outside its allowed range."""


class BackendUnavailableError(EmergenceError):
    """An array backend was requested that this machine cannot provide."""


class DivergenceError(EmergenceError, FloatingPointError):
    """Training or a solver produced non-finite values."""
