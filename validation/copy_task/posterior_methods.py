r"""The copy-task posterior sampled by the chosen method: the one place that dispatches on it.

* ``umbrella`` (softmax): :func:`~emergence.validation.copy_task.posterior_free_energy.run_free_energy_validation`;
  without a grid, six points from :math:`P^*/2.5` to :math:`2P^*` of the posterior theory.
* ``hmc`` (linear): :func:`~emergence.validation.copy_task.linear_posterior_sampling.run_linear_hmc_validation`;
  without a grid, :data:`LINEAR_GRID`.
* ``replica-exchange``: :func:`~emergence.validation.copy_task.posterior_validation.run_replica_exchange_validation`;
  without a grid, :data:`LINEAR_GRID`.

Umbrella and HMC take the :data:`~emergence.validation.copy_task.config.FREE_ENERGY_DEFAULTS`
fields, replica exchange the :data:`~emergence.validation.copy_task.config.POSTERIOR_DEFAULTS`
fields; a setting not given takes its default.  The method itself is chosen (or defaulted by
the attention) by :func:`~emergence.validation.copy_task.config.posterior_method`; the
arguments are checked by the caller.
"""

from __future__ import annotations

from typing import Any, Sequence

from emergence.base.errors import InvalidArgumentError
from emergence.validation.copy_task import linear_posterior_sampling, posterior_free_energy, posterior_validation
from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, POSTERIOR_DEFAULTS

LINEAR_GRID = (8, 16, 32, 64, 128, 256, 512, 1024)
"""The posterior's P grid when none is given and the theory does not place one (linear, replica exchange):
8 to 1024, doubling."""


def _over_defaults(settings: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Every field of ``defaults``, taken from ``settings`` where it is given there."""
    return {key: settings.get(key, defaults[key]) for key in defaults}


def run_posterior_validation(attention: str, L: int, V: int, P: Sequence[int] | None, method: str, convention,
                             settings: dict[str, Any], *, out: str, executor=None, seed: int = 0,
                             theory_draws: int | None = None, progress: bool = True) -> dict[str, Any]:
    """Sample the posterior of the ``attention`` copy task at sizes ``L``, ``V`` on the grid ``P`` by ``method``
    and set it beside the posterior theory and the saddle.

    ``method``: ``"umbrella"``, ``"hmc"`` or ``"replica-exchange"`` (checked, with the other arguments, by
    the caller); ``convention``: a :class:`~emergence.validation.copy_task.config.CopyTaskConvention` for
    ``attention``; ``settings``: the method's sampler fields that differ from their defaults; ``out``: the
    results folder; ``executor``: the sweep's executor.  Returns the method's report: ``predicted``,
    ``saddle``, ``measured``, ``agreement`` and the method's own fields.
    """
    common = {"out": out, "executor": executor, "seed": seed, "progress": progress}
    if method == "umbrella":
        P_star = posterior_free_energy.posterior_P_star(L, V, convention, draws=theory_draws or 20_000)
        if P is None:
            if P_star is None:
                raise InvalidArgumentError("P", f"is needed: the posterior theory has no P* on [20, 20000] at L={L}, "
                                                f"V={V}")
            P = posterior_free_energy.default_P_grid(P_star)
        return posterior_free_energy.run_free_energy_validation(
            L, V, convention, list(P), _over_defaults(settings, FREE_ENERGY_DEFAULTS),
            theory_draws=theory_draws, theory_P_star=P_star, **common)
    grid = list(P or LINEAR_GRID)
    if method == "hmc":
        return linear_posterior_sampling.run_linear_hmc_validation(
            L, V, convention, grid, _over_defaults(settings, FREE_ENERGY_DEFAULTS), theory_draws=theory_draws, **common)
    return posterior_validation.run_replica_exchange_validation(
        attention, L, V, grid, convention, _over_defaults(settings, POSTERIOR_DEFAULTS),
        theory_draws=theory_draws, **common)
