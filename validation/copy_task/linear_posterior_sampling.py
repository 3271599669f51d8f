r"""The linear-attention posterior sampled by HMC: posterior means of the gauge-fixed :math:`c_1, c_G` along :math:`P`.

The linear transitions are continuous, so no umbrella window is needed: unbiased HMC chains per
:math:`P` (half started uniform, half copy) give the posterior means of :math:`c_1, c_G`; P1 (half
rise of :math:`c_1`) and the crossover (steepest rise of :math:`c_G`) are read from them with the
estimators that the posterior theory's fine grid uses
(:func:`~emergence.validation.copy_task.posterior_validation.predicted_linear_posterior`), and
:func:`~emergence.validation.copy_task.posterior_validation.linear_posterior_agreement` passes when
both lie within :data:`LINEAR_TRANSITION_FACTOR` of the theory's and every point meets the diagnostics.
"""

from __future__ import annotations

from typing import Any

LINEAR_TRANSITION_FACTOR = 1.5
"""Linear attention: measured P1 and crossover must lie within this factor of the posterior theory's."""


def run_linear_hmc_validation(L: int, V: int, convention, P_grid, settings: dict[str, Any], out: str,
                              executor=None, seed: int = 0, theory_draws: int | None = None,
                              progress: bool = True) -> dict[str, Any]:
    r"""Linear attention: unbiased HMC posterior means of the gauge-fixed :math:`c_1, c_G` along P against the posterior theory.

    The linear transitions are continuous, so no window is needed: ``chains`` HMC chains per P (half
    started uniform, half copy).  P1 (:math:`c_1` first at twice its prior value) and the crossover (steepest rise of
    :math:`c_G`) use the same estimators on the measured grid as on the theory's fine grid
    (:func:`~emergence.validation.copy_task.posterior_validation.predicted_linear_posterior`);
    every point must meet the diagnostics.
    """
    import os
    from functools import partial

    from emergence.base.sweeps import run_sweep
    from emergence.validation.copy_task.free_energy import run_free_energy_point, umbrella_point_config
    from emergence.validation.copy_task.posterior_validation import (
        linear_posterior_agreement, predicted_linear_posterior, steepest_rise, threshold_crossing,
    )
    from emergence.validation.copy_task.posterior_memory import check_sampler_memory, executor_workers
    from emergence.validation.copy_task.predictions import predicted_saddle

    P_grid = [int(P) for P in P_grid]
    check_sampler_memory("hmc", L, V, P_grid, settings, executor_workers(executor))
    predicted = predicted_linear_posterior(L, V, convention, P_grid, draws=theory_draws or 256)
    saddle = predicted_saddle("linear", L, V, convention, P_grid[0], P_grid[-1])
    configs = [umbrella_point_config(L, V, P, convention, seed=seed, attention="linear", **settings) for P in P_grid]
    results = run_sweep(partial(run_free_energy_point, device="cpu"), configs, os.path.join(out, "hmc"),
                        executor=executor, progress=progress, description="HMC linear")
    measured: dict[str, Any] = {"P": P_grid}
    for key in ("c1_mean", "c1_sem", "cG_mean", "cG_sem", "aG_mean", "aG_sem", "rhat_max", "ess_min", "acceptance",
                "seconds", "seconds_per_gradient", "flops_per_gradient"):
        measured[key] = [r[key] for r in results]
    measured["flagged"] = [not r["converged"] for r in results]
    measured["P1"] = threshold_crossing(P_grid, measured["c1_mean"], predicted["P1_level"])
    measured["crossover"] = steepest_rise(P_grid, measured["cG_mean"])
    agreement = linear_posterior_agreement(measured, predicted, factor=LINEAR_TRANSITION_FACTOR)
    return {"predicted": predicted, "saddle": saddle, "measured": measured, "agreement": agreement}
