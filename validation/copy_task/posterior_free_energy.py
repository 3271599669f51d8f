r"""Posterior validation by free energy (softmax model T): the sampled profile :math:`F(a_G; P)` against the posterior theory.

A first-order transition is located where the two phases have equal free energy, not by waiting
for a chain to tunnel.  For each :math:`P` of the grid:

* **measured** (:func:`~emergence.validation.copy_task.free_energy.run_free_energy_point`):
  umbrella windows on :math:`a_G` sampled by HMC, combined by MBAR, give :math:`F(a_G)`, the
  mass of the copy basin (:math:`a_G \ge a_\dagger`) and
  :math:`\Delta F = -\ln(m_{\rm copy}/m_{\rm uniform})`;
* **predicted** (:meth:`~emergence.numerics.copy_head.posterior.PosteriorTheory.profile`):
  :math:`F_{\rm th}(a_G; P)` with the bulk variances optimised at each :math:`a_G`, and from it
  the same :math:`\Delta F` by the same estimator (the masses of :math:`e^{-F_{\rm th}}` on the
  two sides of :math:`a_\dagger`); the theory's modes and its posterior :math:`P^*` (equal mode
  free energies, :func:`~emergence.numerics.copy_head.posterior_action.posterior_transition`);
* **saddle**: the MAP theory's :math:`P^*` beside them (the bulk dropped).

The measured :math:`P^*` is the root of :math:`\Delta F(P)` (linear in :math:`\ln P` between the two
converged points where it changes sign); its error is the half-width of the roots of
:math:`\Delta F \pm \sigma`.  :func:`free_energy_agreement` passes only when every point meets the
diagnostics (:data:`~emergence.validation.copy_task.free_energy.RHAT_LIMIT`, ESS, overlap), the basins
lie within :data:`BASIN_TOLERANCE` of the theory's, :math:`\Delta F` is within
:math:`\max(1, 2\sigma)` nats of the theory's at every :math:`P` (where one basin holds no sampled
mass, the measurement only says :math:`|\Delta F| > \ln N` for :math:`N` draws, and the theory must lie
beyond that bound on the same side), and :math:`P^*` (where the theory
has one on the grid) is within :data:`P_STAR_FACTOR`.  Basins are compared where the theory's two
modes coexist; where they never do on the grid (a continuous crossover, as at L = 8) the posterior
means of :math:`a_G` must lie within :data:`MEAN_TOLERANCE` of the theory's instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, PROFILE_POINTS, PROFILE_RANGE
from emergence.validation.samplers.umbrella import delta_F_of_profile

BASIN_TOLERANCE = 0.05
DELTA_F_TOLERANCE = 1.0
P_STAR_FACTOR = 1.25
MEAN_TOLERANCE = 0.05


IMPORTANCE_DRAWS = 8000
"""Draws of the theory's trial per mode for the importance-sampled diagnosis (posterior_diagnosis)."""

VERDICT_TRIALS = {"gauge": "gauge-correct Gaussian trial",
                  "block": "block trial, KL-optimal per-block variances"}
"""The trials the verdict can be judged with (:data:`~emergence.numerics.copy_head.posterior.TRIALS`), and how
``predicted.label`` names each: the gauge-correct Gaussian trial and the block trial
(:mod:`~emergence.numerics.copy_head.block_posterior`; the default,
:data:`~emergence.numerics.copy_head.posterior.DEFAULT_TRIAL`)."""


def theory_label(trial: str) -> str:
    """``predicted.label``: the theory and the trial it was computed with.

    >>> theory_label("block")
    'posterior (mean-field bulk, block trial, KL-optimal per-block variances; reconstructed theory)'
    """
    return f"posterior (mean-field bulk, {VERDICT_TRIALS[trial]}; reconstructed theory)"


def predicted_point_config(L: int, V: int, P: float, convention, divide: float, draws: int = 4000, seed: int = 0,
                           importance_draws: int = IMPORTANCE_DRAWS, trial: str = DEFAULT_TRIAL) -> dict[str, Any]:
    """The JSON-able configuration of one theory profile (a resumable sweep point, like a measurement).

    ``seed`` names the measurement's training set, on which the importance-sampled diagnosis weighs the
    theory's trial (``importance_draws`` per mode; 0 skips it).  ``trial``: one of :data:`VERDICT_TRIALS`
    (part of the configuration, so each trial's profiles are stored apart)."""
    return {"experiment": "posterior-theory-profile", "L": int(L), "V": int(V), "P": float(P), "divide": float(divide),
            "draws": int(draws), "seed": int(seed), "importance_draws": int(importance_draws), "trial": trial,
            "convention": convention.with_attention("softmax").as_dict()}


def run_predicted_point(config: dict[str, Any]) -> dict[str, Any]:
    r"""The theory's profile at one P, its :math:`\Delta F` by the measurement's estimator, the two modes and their means.

    The theory is that of ``config["trial"]``.  Where the two modes coexist, ``importance_sampled`` also weighs
    the theory's own trial at each mode against the model's posterior on the measurement's data
    (:func:`~emergence.validation.copy_task.posterior_diagnosis.mode_free_energies`): a diagnosis of the
    variational bound, not a prediction.
    """
    from emergence.numerics.copy_head.posterior import PosteriorTheory
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_diagnosis import mode_free_energies

    convention = CopyTaskConvention(**config["convention"])
    trial = config["trial"]
    theory = PosteriorTheory(config["L"], config["V"], convention, draws=config["draws"], trial=trial)
    grid = np.linspace(*PROFILE_RANGE, PROFILE_POINTS)
    profile = theory.profile(config["P"], grid)
    F = np.asarray(profile["F"])
    weight = np.exp(-F)
    delta_F = delta_F_of_profile(grid, F, config["divide"])
    modes = theory.modes(config["P"])
    coexistence = bool(abs(modes["copy"].aG - modes["uniform"].aG) > 0.05)
    importance = (mode_free_energies(config["L"], config["V"], int(config["P"]), modes, convention,
                                     config["importance_draws"], config["seed"], trial=trial)
                  if coexistence and config["importance_draws"] > 0 else None)
    return {
        "P": config["P"], "profile": profile,
        "delta_F": delta_F, "mode_weight": float(1 / (1 + np.exp(delta_F))),
        "aG_mean": float(np.trapezoid(weight * grid, grid) / np.trapezoid(weight, grid)),
        "basin_aG": _profile_basins(grid, F, config["divide"]),
        "modes": {name: {"aG": mode.aG, "free_energy": mode.free_energy, "t_u": mode.t_u, "t_v": mode.t_v}
                  for name, mode in modes.items()},
        "coexistence": coexistence, "importance_sampled": importance,
    }


def _profile_basins(grid, F, divide) -> dict[str, float | None]:
    """The lowest point of the profile on each side of ``divide`` if it is a local minimum (not the edge), else ``None``."""
    basins: dict[str, float | None] = {}
    for name, side in (("uniform", grid < divide), ("copy", grid >= divide)):
        index = np.flatnonzero(side)
        best = index[np.argmin(F[index])]
        interior = 0 < best < len(grid) - 1 and F[best] <= F[best - 1] and F[best] <= F[best + 1]
        basins[name] = float(grid[best]) if interior else None
    return basins


def first_sign_change(values) -> int | None:
    """The first i where ``values`` change sign from positive (i) to non-positive (i + 1); ``None`` without one."""
    return next((i for i in range(len(values) - 1) if values[i] > 0 >= values[i + 1]), None)


def root_in_log_P(P, values) -> float | None:
    """Where ``values`` first change sign from positive to non-positive, linear in ln P; ``None`` without one."""
    i = first_sign_change(values)
    if i is None:
        return None
    fraction = values[i] / (values[i] - values[i + 1])
    return float(np.exp(np.log(P[i]) + fraction * (np.log(P[i + 1]) - np.log(P[i]))))


PROFILE_KEYS = ("P", "bins", "F", "F_error", "centres", "window_mean", "window_rhat", "window_ess",
                "window_t_u", "window_t_v", "window_t_copy", "window_g", "acceptance", "window_overlap",
                "swap_acceptance", "placement", "draws")
"""What the ``measured`` record keeps of each point's profile."""
PER_POINT_KEYS = ("delta_F", "delta_F_error", "aG_mean", "aG_sem", "basin_aG", "mode_weight", "seconds",
                  "seconds_per_gradient", "flops_per_gradient")
"""Per-point values the ``measured`` record lists along P."""


def measured_P_star(P, delta_F, delta_F_error, converged) -> dict[str, float | None] | None:
    r"""The root of :math:`\Delta F(P)` over the converged points (:func:`root_in_log_P`), with the
    half-width of the roots of :math:`\Delta F \pm \sigma` as its error (``None`` if one of them is off the grid)
    and ``bracket``, the two converged grid points it lies between: the resolution of the grid.  The error holds
    only the errors of :math:`\Delta F`; how far :math:`\Delta F` bends between the bracket's ends (linear in
    :math:`\ln P` assumed) is not in it, so the bracket is the measurement and the root a reading inside it.

    >>> measured_P_star([100, 200, 400], [2.0, -2.0, -6.0], [0.1, 0.1, 0.1], [True, True, True])["bracket"]
    [100, 200]
    """
    usable = [i for i, ok in enumerate(converged) if ok]
    P_used = [P[i] for i in usable]
    delta, error = np.asarray(delta_F)[usable], np.asarray(delta_F_error)[usable]
    value = root_in_log_P(P_used, delta)
    if value is None:
        return None
    with np.errstate(invalid="ignore"):  # an empty basin's -inf with its infinite error: NaN, never a sign change
        low, high = (root_in_log_P(P_used, delta + sign * error) for sign in (-1, 1))
    i = first_sign_change(delta)
    return {"value": value, "error": None if low is None or high is None else 0.5 * abs(high - low),
            "bracket": [P_used[i], P_used[i + 1]]}


def measured_free_energy(grid, results) -> dict[str, Any]:
    """The ``measured`` record: profiles per P, ``P_star`` {value, error}, and the worst diagnostics."""
    measured: dict[str, Any] = {"P": list(grid), "converged": [bool(r["converged"]) for r in results],
                                "profiles": [{key: r.get(key) for key in PROFILE_KEYS} for r in results]}
    measured.update({key: [r[key] for r in results] for key in PER_POINT_KEYS})
    measured["delta_F_bound"] = [float(np.log(r["samples"])) if "samples" in r else None for r in results]
    measured["P_star"] = measured_P_star(grid, measured["delta_F"], measured["delta_F_error"], measured["converged"])
    measured.update(rhat_max=max(r["rhat_max"] for r in results), ess_min=min(r["ess_min"] for r in results),
                    overlap_min=min(r["overlap_min"] for r in results))
    return measured


def bulk_comparison(measured: dict[str, Any], predicted: dict[str, Any]) -> list[dict[str, Any]]:
    r"""The sampled bulk against the theory's: per P and window, :math:`\hat t_u, \hat t_v, \hat t_{\rm copy}` of the samples
    (:func:`~emergence.validation.copy_task.free_energy.bulk_variance_ratios`) beside the theory's
    optimised :math:`t_u, t_v` at the window's mean :math:`a_G` (linear interpolation on the profile grid;
    the theory gives the copy-diagonal entries its :math:`t_v`).

    A diagnosis, not a verdict: where the free energies disagree, this says whether the mean-field
    bulk (its two variances, and the symmetric ansatz for the copy diagonal) is what breaks.
    """
    rows = []
    for sampled, theory in zip(measured["profiles"], predicted["profiles"]):
        if sampled.get("window_t_u") is None:
            continue
        at = sampled["window_mean"]
        rows.append({"P": sampled["P"], "aG": at, "t_u": sampled["window_t_u"], "t_v": sampled["window_t_v"],
                     "t_copy": sampled.get("window_t_copy"),
                     "t_u_theory": np.interp(at, theory["aG"], theory["t_u"]).tolist(),
                     "t_v_theory": np.interp(at, theory["aG"], theory["t_v"]).tolist()})
    return rows


def _delta_F_difference(measured_delta: float, bound: float | None, theory_delta: float) -> float:
    """|measured - theory|; where one basin holds no sampled mass (infinite measured Delta F) the measurement
    only bounds |Delta F| from below by ln N: 0 if the theory lies beyond the bound on the same side, else inf."""
    if np.isfinite(measured_delta):
        return abs(measured_delta - theory_delta)
    beyond = np.sign(theory_delta) == np.sign(measured_delta) and bound is not None and abs(theory_delta) >= bound
    return 0.0 if beyond else np.inf


def _basin_errors(measured: dict[str, Any], predicted: dict[str, Any], reasons: list[str]) -> list[float]:
    """|measured - theory| of each basin at the P where the theory's modes coexist; a missing one is a reason."""
    errors = []
    for i, P in enumerate(measured["P"]):
        theory = predicted["points"][i]
        for name in ("uniform", "copy"):
            expected, found = theory["basin_aG"][name], measured["basin_aG"][i][name]
            if not theory["coexistence"] or expected is None:
                continue
            if found is None:
                reasons.append(f"no measured {name} basin at P = {P:g} (theory {expected:.2f})")
            else:
                errors.append(abs(found - expected))
    return errors


def free_energy_agreement(measured: dict[str, Any], predicted: dict[str, Any]) -> dict[str, Any]:
    """``P_star_ratio``, ``basin_aG_error_max``, ``delta_F_error_max``, ``aG_mean_error_max``, ``passes`` and ``reasons``."""
    reasons: list[str] = []
    unconverged = [P for P, ok in zip(measured["P"], measured["converged"]) if not ok]
    if unconverged:
        reasons.append(f"diagnostics not met (R-hat, ESS or overlap) at P = {unconverged}")
    basin_errors = _basin_errors(measured, predicted, reasons)
    points = predicted["points"]
    delta_errors = [_delta_F_difference(delta, bound, theory["delta_F"]) for delta, bound, theory in
                    zip(measured["delta_F"], measured["delta_F_bound"], points)]
    for P, delta, error, difference, theory in zip(measured["P"], measured["delta_F"], measured["delta_F_error"],
                                                   delta_errors, points):
        if not difference <= max(DELTA_F_TOLERANCE, 2 * error):
            reasons.append(f"Delta F {delta:.1f} ± {error:.1f} against the theory's {theory['delta_F']:.1f} at P = {P:g}")
    mean_errors = [abs(mean - theory["aG_mean"]) for mean, theory in zip(measured["aG_mean"], points)]
    basin_max = max(basin_errors) if basin_errors else None
    if basin_max is not None and basin_max > BASIN_TOLERANCE:
        reasons.append(f"basin a_G off by {basin_max:.2f} > {BASIN_TOLERANCE}")
    if not any(point["coexistence"] for point in points) and max(mean_errors) > MEAN_TOLERANCE:
        worst = int(np.argmax(mean_errors))
        reasons.append(f"posterior mean a_G {measured['aG_mean'][worst]:.2f} against the theory's "
                       f"{points[worst]['aG_mean']:.2f} at P = {measured['P'][worst]:g}")
    ratio = None
    if predicted["P_star"] is not None:
        if measured["P_star"] is None:
            reasons.append(f"no measured P* on the converged grid (theory {predicted['P_star']:.0f})")
        else:
            ratio = measured["P_star"]["value"] / predicted["P_star"]
            if not 1 / P_STAR_FACTOR <= ratio <= P_STAR_FACTOR:
                reasons.append(f"P* ratio {ratio:.2f} outside {P_STAR_FACTOR}x")
    return {"P_star_ratio": ratio, "basin_aG_error_max": basin_max, "delta_F_error_max": max(delta_errors),
            "aG_mean_error_max": max(mean_errors), "passes": not reasons, "reasons": reasons}


def default_P_grid(theory_P_star: float, points: int = 6) -> list[int]:
    """``points`` values of P, geometric from P*/2.5 to 2 P* (P* the posterior theory's), spanning the jump."""
    return sorted({int(round(p)) for p in np.geomspace(theory_P_star / 2.5, 2 * theory_P_star, points)})


def posterior_P_star(L: int, V: int, convention, low: float = 20.0, high: float = 20_000.0, points: int = 16,
                     draws: int = 20_000, averages: str = "quadrature", trial: str = DEFAULT_TRIAL):
    """The posterior theory's P* on a geometric scan of ``[low, high]`` (``None`` without a jump there).

    ``averages``: the theory's row averages (:data:`~emergence.numerics.copy_head.posterior.AVERAGES`); ``draws``
    is read by ``"monte_carlo"`` only.  ``trial``: the theory's trial (:data:`~emergence.numerics.copy_head.posterior.TRIALS`).
    """
    from emergence.numerics.copy_head.posterior import PosteriorTheory
    from emergence.numerics.copy_head.posterior_action import posterior_coexistence

    scan = np.geomspace(low, high, points)
    return posterior_coexistence(PosteriorTheory(L, V, convention, draws=draws, averages=averages, trial=trial), scan)


def run_comparison_point(config: dict[str, Any]) -> dict[str, Any]:
    """One point of the comparison's sweep: a theory profile (:func:`run_predicted_point`) or an umbrella point
    (:func:`~emergence.validation.copy_task.free_energy.run_free_energy_point`, on the CPU), by ``config["experiment"]``."""
    from emergence.validation.copy_task.free_energy import run_free_energy_point

    if config["experiment"] == "posterior-theory-profile":
        return run_predicted_point(config)
    return run_free_energy_point(config, device="cpu")


THEORY_PROFILE_COST = 0.3
"""A theory profile's run time in units of an umbrella point of the same P with the default settings, roughly (L = 8,
V = 4, the loaded 2-core development machine: 26 s for the profile at P = 98 against 95-250 s an umbrella point);
it only orders the points."""


def comparison_cost(config: dict[str, Any]) -> float:
    r"""A point's expected run time, relative: an umbrella point's gradients, :math:`P \cdot` windows :math:`\cdot`
    chains :math:`\cdot` (warm-up + draws) :math:`\cdot` leapfrog steps, over the default settings' at the same P;
    a theory profile :data:`THEORY_PROFILE_COST` of the default umbrella point at its P.  The sweep hands out the
    costliest first, so the short theory profiles fill the workers' last gaps instead of waiting for a core."""
    if config["experiment"] == "posterior-theory-profile":
        return THEORY_PROFILE_COST * config["P"]
    defaults = FREE_ENERGY_DEFAULTS
    work = len(config["centres"]) * config["chains"] * (config["warmup"] + config["draws"]) * config["leapfrog"]
    return config["P"] * work / (len(defaults["centres"]) * defaults["chains"] * (defaults["warmup"] + defaults["draws"])
                                 * defaults["leapfrog"])


def run_free_energy_validation(L: int, V: int, convention, P_grid, settings: dict[str, Any], out: str,
                               executor=None, seed: int = 0, theory_draws: int | None = None,
                               theory_P_star: float | None = None, progress: bool = True,
                               trial: str = DEFAULT_TRIAL) -> dict[str, Any]:
    """The whole softmax free-energy comparison: theory profiles and umbrella points (both resumable sweeps), saddle, agreement.

    ``theory_P_star``: the posterior theory's P* if already known (:func:`posterior_P_star`, scanned on its
    fixed grid, so it does not depend on the measured grid).  ``trial``: the theory's trial (:data:`VERDICT_TRIALS`).

    Returns the report's ``predicted``, ``saddle``, ``measured`` and ``agreement`` records (see the module docstring).
    """
    import os

    from emergence.base.sweeps import run_sweep
    from emergence.validation.copy_task.free_energy import umbrella_point_config
    from emergence.validation.copy_task.posterior_memory import check_sampler_memory, compiled_sampling, executor_workers
    from emergence.validation.copy_task.predictions import predicted_saddle

    P_grid = [int(P) for P in P_grid]
    check_sampler_memory("umbrella", L, V, P_grid, settings, executor_workers(executor),
                         compiled_sampling("umbrella", "softmax", convention.architecture))
    if theory_P_star is None:
        theory_P_star = posterior_P_star(L, V, convention, draws=theory_draws or 20_000, trial=trial)
    divide = float(settings["divide"])
    theory_configs = [predicted_point_config(L, V, P, convention, divide, draws=theory_draws or 4000, seed=seed,
                                             trial=trial) for P in P_grid]
    configs = [umbrella_point_config(L, V, P, convention, seed=seed, **settings) for P in P_grid]
    points = run_sweep(run_comparison_point, configs + theory_configs, os.path.join(out, "points"), executor=executor,
                       progress=progress, description="umbrella windows and posterior theory profiles",
                       cost=comparison_cost)
    results, theory_points = points[:len(configs)], points[len(configs):]
    predicted = predicted_record(P_grid, theory_P_star, divide, theory_points, trial)
    saddle = predicted_saddle("softmax", L, V, convention, min(P_grid) / 4, max(P_grid) * 4)
    measured = measured_free_energy(P_grid, results)
    measured["bulk"] = bulk_comparison(measured, predicted)
    return {"predicted": predicted, "saddle": saddle, "measured": measured,
            "agreement": judged_agreement(measured, predicted, saddle)}


def predicted_record(P_grid, theory_P_star: float | None, divide: float, theory_points: list[dict[str, Any]],
                     trial: str) -> dict[str, Any]:
    """The report's ``predicted``: the theory profiles of :func:`run_predicted_point` along ``P_grid``, its P* and trial."""
    return {"label": theory_label(trial), "trial": trial, "P": list(P_grid), "P_star": theory_P_star,
            "divide": divide, "points": theory_points,
            "profiles": [point["profile"] for point in theory_points],
            "delta_F": [point["delta_F"] for point in theory_points],
            "delta_F_importance_sampled": [_importance_delta(point) for point in theory_points]}


def judged_agreement(measured: dict[str, Any], predicted: dict[str, Any], saddle: dict[str, Any]) -> dict[str, Any]:
    """:func:`free_energy_agreement`, with the measured and the theory's P* over the saddle's where both exist."""
    agreement = free_energy_agreement(measured, predicted)
    theory_P_star = predicted["P_star"]
    if measured["P_star"] is not None and saddle["P_star"]:
        agreement["posterior_over_saddle"] = {"measured": measured["P_star"]["value"] / saddle["P_star"],
                                              "theory": theory_P_star / saddle["P_star"] if theory_P_star else None}
    return agreement


def _importance_delta(point: dict[str, Any]) -> dict[str, float] | None:
    """The copy-minus-uniform free energy of the theory's two modes after importance weighting (None without coexistence)."""
    importance = point.get("importance_sampled")
    if importance is None:
        return None
    return {"value": importance["delta"]["F_IS"], "error": importance["delta_error"],
            "theory_modes": importance["delta"]["F_theory"]}
