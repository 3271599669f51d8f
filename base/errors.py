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


class InvalidArgumentError(EmergenceError, ValueError):
    """An argument of a Python API function that is refused before any work: the message names the
    function's ``parameter`` (``"L must be an integer >= 3, got 64.5"``); the command line replaces
    that name with its own flag (``--L``).  Other parameters the ``reason`` names are written
    ``{name}`` in it and listed in ``mentions`` (``"is the K of the {stats} file"``), so that they
    are renamed the same way.

    >>> str(InvalidArgumentError("top_k", "is the K of the {stats} file", mentions=("stats",)))
    'top_k is the K of the stats file'
    """

    def __init__(self, parameter: str, reason: str, mentions: tuple[str, ...] = ()):
        self.parameter = parameter
        self.reason = reason
        self.mentions = mentions
        super().__init__(self.naming(lambda name: name))

    def naming(self, option) -> str:
        """The message with ``option(name)`` in place of each parameter's name (``--L must be ...``); a
        reason that starts with a colon follows the name at once (``law: 'os' is not allowed``)."""
        reason = self.reason
        for name in self.mentions:
            reason = reason.replace("{" + name + "}", option(name))
        return f"{option(self.parameter)}{'' if reason.startswith(':') else ' '}{reason}"

    def __reduce__(self):
        return type(self), (self.parameter, self.reason, self.mentions)
