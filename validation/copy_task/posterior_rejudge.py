r"""A saved umbrella measurement judged again against the posterior theory, without resampling.

The sampled part of a softmax posterior validation (its ``measured`` block: the MBAR profiles, :math:`\Delta F`
and the diagnostics per P) does not depend on the theory; only ``predicted`` and ``agreement`` do.  So a record
can be judged with another trial of the theory (:data:`~emergence.validation.copy_task.posterior_free_energy.VERDICT_TRIALS`)
by recomputing, at the record's own sizes, convention, basin divide and data seed:

* the theory's profile at each measured P (:func:`~emergence.validation.copy_task.posterior_free_energy.run_predicted_point`,
  ``theory_draws`` rows, 4000 by default as in the validation) and its P* on the fixed scan
  (:func:`~emergence.validation.copy_task.posterior_free_energy.posterior_P_star`, 20000 rows by default);
* the bulk comparison (the sampled window variances beside the new theory's) and the agreement
  (:func:`~emergence.validation.copy_task.posterior_free_energy.judged_agreement`, the same tolerances).

Several records of one setting (the same L, V, convention, divide and seed) are merged point by point first
(:func:`merged_measurement`): a later record's point replaces an earlier one's at the same P (a converged rerun),
and the worst diagnostics and the sampled P* are recomputed over the merged points.  The saddle is the first
record's (it depends on neither the sampling nor the trial).  The result keeps every source record's provenance
under ``reused``: the sampled part is reused, not resampled.
"""

from __future__ import annotations

from typing import Any, Sequence

from emergence.base.errors import EmergenceError
from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.validation.copy_task.posterior_free_energy import (
    PER_POINT_KEYS, bulk_comparison, judged_agreement, measured_P_star, posterior_P_star, predicted_point_config,
    predicted_record, run_predicted_point)

SETTING_KEYS = ("L", "V", "convention", "divide", "seed")
"""What records merged into one measurement must share."""

MEASURED_KEYS = ("P", "converged", "profiles", *PER_POINT_KEYS, "delta_F_bound")
"""The per-point lists of a record's ``measured`` block that the judgment reads (merged point by point)."""


def record_setting(record: dict[str, Any]) -> dict[str, Any]:
    """The setting a record's measurement was sampled in: ``L, V, convention, divide, seed`` (from its provenance).

    :class:`~emergence.base.errors.EmergenceError` for a record that is no softmax umbrella validation.
    """
    try:
        config = record["provenance"]["config"]
        if config["attention"] != "softmax" or config["method"] != "umbrella":
            raise EmergenceError(f"not a softmax umbrella validation ({config['attention']}, {config['method']})")
        missing = [key for key in MEASURED_KEYS if key not in record["measured"]]
        if missing:
            raise EmergenceError(f"the record's measured block lacks {', '.join(missing)}")
        return {"L": int(config["L"]), "V": int(config["V"]), "convention": config["convention"],
                "divide": float(record["predicted"]["divide"]), "seed": int(record["provenance"]["seed"])}
    except (KeyError, TypeError) as error:
        raise EmergenceError(f"not a posterior validation record (no {error})") from None


def merged_measurement(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``measured`` blocks of ``records`` (one setting) merged point by point, sorted by P; a later record's point
    replaces an earlier one's at the same P.  The worst R-hat, ESS and overlap and the sampled P*
    (:func:`~emergence.validation.copy_task.posterior_free_energy.measured_P_star`) are those of the merged points."""
    chosen: dict[float, tuple[dict[str, Any], int]] = {}
    for record in records:
        for i, P in enumerate(record["measured"]["P"]):
            chosen[P] = (record["measured"], i)
    grid = sorted(chosen)
    merged: dict[str, Any] = {"P": grid, **{key: [chosen[P][0][key][chosen[P][1]] for P in grid]
                                            for key in MEASURED_KEYS[1:]}}
    profiles = merged["profiles"]
    merged["P_star"] = measured_P_star(grid, merged["delta_F"], merged["delta_F_error"], merged["converged"])
    merged.update(rhat_max=max(max(p["window_rhat"]) for p in profiles),
                  ess_min=min(min(p["window_ess"]) for p in profiles),
                  overlap_min=min((min(p["window_overlap"]) for p in profiles if p["window_overlap"]), default=None))
    return merged


def common_setting(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The setting all ``records`` share (:func:`record_setting`); one line naming the first difference otherwise."""
    settings = [record_setting(record) for record in records]
    for index, setting in enumerate(settings[1:], start=2):
        differing = [key for key in SETTING_KEYS if setting[key] != settings[0][key]]
        if differing:
            raise EmergenceError(f"record {index} was sampled with another {differing[0]} than record 1 "
                                 f"({setting[differing[0]]} against {settings[0][differing[0]]}): cannot merge them")
    return settings[0]


def judge_measurement(records: Sequence[dict[str, Any]], trial: str = DEFAULT_TRIAL, theory_draws: int | None = None,
                      importance_draws: int = 0, progress: bool = True) -> dict[str, Any]:
    """The records' merged measurement judged against the posterior theory with ``trial``.

    ``theory_draws``: Monte Carlo rows of the theory (``None``: 4000 per profile and 20000 for P*, the
    validation's); ``importance_draws``: draws per mode of the importance-weighted diagnosis (0 skips it);
    ``progress``: show a bar over the profiles and the P* scan.  Returns ``predicted``, ``saddle``, ``measured``
    (the merged one, with the new bulk comparison), ``agreement`` and ``reused`` (the source records' provenance).
    """
    from emergence.base.progress import progress as progress_bar
    from emergence.validation.copy_task.config import CopyTaskConvention

    setting = common_setting(records)
    measured = merged_measurement(records)
    convention = CopyTaskConvention(**setting["convention"])
    bar = progress_bar(len(measured["P"]) + 1, f"{trial} theory profiles and P*", "step") if progress else None
    points = []
    for P in measured["P"]:
        points.append(run_predicted_point(predicted_point_config(
            setting["L"], setting["V"], P, convention, setting["divide"], draws=theory_draws or 4000,
            seed=setting["seed"], importance_draws=importance_draws, trial=trial)))
        if bar is not None:
            bar.update(1)
    theory_P_star = posterior_P_star(setting["L"], setting["V"], convention, draws=theory_draws or 20_000, trial=trial)
    if bar is not None:
        bar.update(1)
        bar.close()
    predicted = predicted_record(measured["P"], theory_P_star, setting["divide"], points, trial)
    measured["bulk"] = bulk_comparison(measured, predicted)
    saddle = records[0]["saddle"]
    return {"predicted": predicted, "saddle": saddle, "measured": measured,
            "agreement": judged_agreement(measured, predicted, saddle),
            "reused": {"measured": "sampled part reused from the source records, not resampled",
                       "sources": [record["provenance"] for record in records]}, "setting": setting}

