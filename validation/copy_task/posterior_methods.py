r"""The copy-task posterior sampled by the chosen method: the one place that dispatches on it.

* ``umbrella`` (softmax): :func:`~emergence.validation.copy_task.posterior_free_energy.run_free_energy_validation`;
  without a grid, six points from :math:`P^*/2.5` to :math:`2P^*` of the posterior theory.
* ``hmc`` (linear): :func:`~emergence.validation.copy_task.linear_posterior_sampling.run_linear_hmc_validation`;
  without a grid, :data:`LINEAR_GRID`.
* ``replica-exchange``: :func:`~emergence.validation.copy_task.posterior_validation.run_replica_exchange_validation`;
  without a grid, :data:`LINEAR_GRID`.

Umbrella and HMC take the :data:`~emergence.validation.copy_task.config.FREE_ENERGY_DEFAULTS`
fields, replica exchange the :data:`~emergence.validation.copy_task.config.POSTERIOR_DEFAULTS`
fields; a setting not given takes its default.  The method itself is chosen here, once, by
:func:`posterior_method` (the default by the attention, a method refused for the other attention),
for the API and the command line alike; the other arguments are checked by the caller.  The samplers
are imported when they run, so choosing a method imports no torch.
"""

from __future__ import annotations

from typing import Any, Sequence

from emergence.base.errors import InvalidArgumentError
from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, POSTERIOR_DEFAULTS

POSTERIOR_METHODS = ("umbrella", "hmc", "replica-exchange")
"""How the copy-task posterior is sampled: umbrella windows + MBAR (softmax), unbiased HMC (linear), or the older
replica exchange."""

METHOD_ATTENTION = {"umbrella": "softmax", "hmc": "linear"}
"""The attention a method is for (replica exchange: both): linear attention has no first-order jump for
umbrella windows to cross, and softmax's basins need windows."""

LINEAR_GRID = (8, 16, 32, 64, 128, 256, 512, 1024)
"""The posterior's P grid when none is given and the theory does not place one (linear, replica exchange):
8 to 1024, doubling."""


def posterior_method(attention: str, method: str | None = None) -> str:
    """``method``, or where it is ``None`` the default for ``attention`` (the one place it is decided):
    umbrella windows for softmax, whose basins a first-order jump separates; HMC for linear, which has none.
    :class:`~emergence.base.errors.InvalidArgumentError` naming ``method`` for another name, or for a method
    of the other attention (:data:`METHOD_ATTENTION`).

    >>> posterior_method("softmax"), posterior_method("linear"), posterior_method("linear", "replica-exchange")
    ('umbrella', 'hmc', 'replica-exchange')
    """
    from emergence.base import arguments as check

    if method is None:
        return "umbrella" if attention == "softmax" else "hmc"
    method = check.choice("method", method, POSTERIOR_METHODS)
    if METHOD_ATTENTION.get(method, attention) != attention:
        raise InvalidArgumentError("method", f"{method} is for {METHOD_ATTENTION[method]} attention (linear has no "
                                             "first-order jump to cross; softmax's basins need windows)")
    return method


def _over_defaults(settings: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Every field of ``defaults``, taken from ``settings`` where it is given there."""
    return {key: settings.get(key, defaults[key]) for key in defaults}


def run_posterior_validation(attention: str, L: int, V: int, P: Sequence[int] | None, method: str, convention,
                             settings: dict[str, Any], *, out: str, executor=None, seed: int = 0,
                             theory_draws: int | None = None, progress: bool = True,
                             theory_P_star: float | None = None, trial: str = DEFAULT_TRIAL) -> dict[str, Any]:
    """Sample the posterior of the ``attention`` copy task at sizes ``L``, ``V`` on the grid ``P`` by ``method``
    and set it beside the posterior theory and the saddle.

    ``method``: ``"umbrella"``, ``"hmc"`` or ``"replica-exchange"`` (checked, with the other arguments, by
    the caller); ``convention``: a :class:`~emergence.validation.copy_task.config.CopyTaskConvention` for
    ``attention``; ``settings``: the method's sampler fields that differ from their defaults; ``out``: the
    results folder; ``executor``: the sweep's executor.  Returns the method's report: ``predicted``,
    ``saddle``, ``measured``, ``agreement`` and the method's own fields.  ``theory_P_star``: umbrella, the
    posterior theory's P* where a caller already has it (a run on another grid at the same sizes), else scanned.
    ``trial``: umbrella, the posterior theory's trial
    (:data:`~emergence.validation.copy_task.posterior_free_energy.VERDICT_TRIALS`; the other methods have none).
    """
    from emergence.validation.copy_task import linear_posterior_sampling, posterior_free_energy, posterior_validation

    common = {"out": out, "executor": executor, "seed": seed, "progress": progress}
    if method == "umbrella":
        P_star = theory_P_star
        if P_star is None:
            P_star = posterior_free_energy.posterior_P_star(L, V, convention, draws=theory_draws or 20_000, trial=trial)
        if P is None:
            if P_star is None:
                raise InvalidArgumentError("P", f"is needed: the posterior theory has no P* on [20, 20000] at L={L}, "
                                                f"V={V}")
            P = posterior_free_energy.default_P_grid(P_star)
        return posterior_free_energy.run_free_energy_validation(
            L, V, convention, list(P), _over_defaults(settings, FREE_ENERGY_DEFAULTS),
            theory_draws=theory_draws, theory_P_star=P_star, trial=trial, **common)
    grid = list(P or LINEAR_GRID)
    if method == "hmc":
        return linear_posterior_sampling.run_linear_hmc_validation(
            L, V, convention, grid, _over_defaults(settings, FREE_ENERGY_DEFAULTS), theory_draws=theory_draws, **common)
    return posterior_validation.run_replica_exchange_validation(
        attention, L, V, grid, convention, _over_defaults(settings, POSTERIOR_DEFAULTS),
        theory_draws=theory_draws, **common)
