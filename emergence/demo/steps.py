"""The steps of ``emergence demo``: each calls the public entry points of one part of the engine.

=================  =====================================================================
step               calls (the same functions as the command named)
=================  =====================================================================
``derivations``    :func:`emergence.api.derive` (``emergence derive copy-head``);
                   ``emergence.theory.leading_terms.recursion``
``phase_diagrams`` :func:`emergence.api.phase_diagram` (``emergence phase-diagram``)
``scaling``        :func:`emergence.api.scaling` (``emergence scaling``)
``copy_task``      :func:`emergence.api.run_copy_experiment` (``emergence validate copy-head``)
``leading_terms``  :func:`emergence.api.validate_leading_terms` (``emergence validate leading-terms``)
``associations``   ``emergence.numerics.leading_terms.associations`` (``emergence associate``)
=================  =====================================================================

Figures are drawn by :mod:`emergence.report.figures` from the same records (``record.plot()``), so
the report's figures and the commands' ``--plot`` files are the same pictures.

Sizes are fixed per mode (:data:`QUICK` / :data:`FULL`) and listed in each step's
``settings``, which key the stored results.  Nothing here is fitted or tuned: every number in
a section is what the layer returned.  Each step returns a :class:`~emergence.report.writer.Section`
whose ``data`` holds every number shown and the plotted arrays (``data["plots"]``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from emergence.demo.framework import DemoContext, DemoStep
from emergence.demo.figures import draw_plots, plot_record
from emergence.report.writer import Section, markdown_table

RECONSTRUCTION = (
    "The copy-head model is a reconstruction: only the abstract of Lavie et al., arXiv 2606.12058, is "
    "available, so the model (model T: queries/keys on token + position, Gaussian priors, Gibbs likelihood), "
    "its W-marginal and its reduction to two order parameters are the engine's own, inside the paper's "
    "framework. Its scaling laws are the paper's claims; its prefactors are ours."
)

PHASE_DIAGRAM = {"L": 256, "V": 16, "P_min": 1.0, "P_max": 1e8, "points": 400}
"""The phase diagrams' sizes (the reference point of docs/derivations/copy_head.md) and P grid."""

AROUND_PREDICTION = "around the theory's transitions"
"""A demo grid built from the theory's own transitions (:func:`emergence.validation.copy_task.copy_experiment.grid_around_prediction`:
softmax, 8 points spanning [P*/3, 3P*]; linear, 5 points over each of [P1/2, 2 P1] and [P_G/2, 2 P_G])."""

SGLD_AGAINST_SADDLE = ("SGLD samples the posterior; the theory curves here are the saddle (a MAP), so this compares "
                       "a posterior with a MAP and is not a verdict on the theory (the posterior-level theory: "
                       "`emergence validate posterior`)")
"""What an SGLD row of the copy-task validation is, in its own words."""

# Leading terms run at a rate inside the theorem's window for every epoch and at one far outside it
# (s*eta up to 30-100), to show where the leading terms stop describing the weights.
QUICK: dict[str, Any] = {
    "scaling": {"fast": True, "dps": 30},
    "copy_task": [
        {"attention": "linear", "L": 8, "V": 4, "P": AROUND_PREDICTION, "bisections": 4, "seeds": 2, "adam_steps": 300,
         "sgld_burn_in": 300, "sgld_draws": 10, "sgld_thin": 10, "chains": 1, "objective": "marginal"},
    ],
    "leading_terms": [
        {"lr": 0.002, "epochs": 10, "max_sequences": 32, "layers": 2},
        {"lr": 1.0, "epochs": 30, "max_sequences": 32, "layers": 2},
    ],
}
FULL: dict[str, Any] = {
    "scaling": {"fast": False, "dps": 50},
    "copy_task": [
        # Adam on 5 points over each of [P1/2, 2 P1] and [P_G/2, 2 P_G], then bisection while a bracket straddles
        # the factor 2 (Adam only: SGLD's posterior is compared with the saddle, not judged by it)
        {"attention": "linear", "L": 8, "V": 4, "P": AROUND_PREDICTION, "bisections": 4, "seeds": 2,
         "adam_steps": 1500, "sgld_burn_in": 1000, "sgld_draws": 25, "sgld_thin": 20, "chains": 1,
         "objective": "marginal"},
        # Adam only, on 8 points spanning [P*/3, 3P*] around the theory's P* at the default convention, then
        # 2 bisection points inside the measured jump (SGLD's posterior is not the saddle for softmax:
        # `emergence validate posterior` measures it)
        {"attention": "softmax", "L": 32, "V": 8, "P": AROUND_PREDICTION, "bisections": 2, "seeds": 1,
         "adam_steps": 2000, "optimizers": ["adam"], "objective": "marginal"},
    ],
    "leading_terms": [
        {"lr": 0.002, "epochs": 20, "max_sequences": 64, "layers": 2},
        {"lr": 1.0, "epochs": 100, "max_sequences": 64, "layers": 2},
    ],
}
LEADING_T = 64
"""Sequence length of the leading-term validation and the association statistics."""
TOP = 5
"""Neighbours listed per association kind."""


def mode(context: DemoContext) -> dict[str, Any]:
    return QUICK if context.quick else FULL


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.{digits}g}"


def _cosine(value: float | None) -> str:
    """A cosine with ten decimals (values near 1 differ in the late digits)."""
    return "—" if value is None else f"{value:.10f}"


def _progress(total: int, description: str):
    from emergence.base.progress import progress

    return progress(total, description)


# ---------------------------------------------------------------- derivations

COPY_HEAD_KEY_RESULTS = {
    "linear": [("reduction", "s1"), ("reduction", "sG"), ("reduction", "action"), ("landau", "P1"),
               ("landau", "P1_leading"), ("landau", "PG"), ("landau", "PG_leading")],
    "softmax": [("softmax_action", "action"), ("readout_asymptotics", "odds"), ("readout_asymptotics", "Pi_star"),
                ("readout_asymptotics", "P_star_leading")],
}
"""(step key, equation label) of the results shown: reduced actions and the P1 / crossover / P* conditions
(softmax: the default readout scaling r = 1, where the jump lands and its leading P*)."""


def _copy_head_derivation(attention: str) -> dict:
    from emergence.api import derive

    return derive("copy-head", attention, "T").to_dict()


def _key_equations(document: dict, wanted: list[tuple[str, str]]) -> list[dict]:
    found = {(step["key"], e["label"]): dict(e, step=step["title"]) for step in document["steps"]
             for e in step["equations"]}
    return [found[key] for key in wanted if key in found]


LEADING_WEIGHT_NAMES = {"output": "W_O (times B̄)", "value": "V (times Φ̄ᵀB̄ᵀ)", "key_query": "W, P (times Q̄, Δ)"}


def _leading_coefficients() -> dict:
    from emergence.theory.leading_terms.recursion import comparison_with_paper

    return {"coefficients": [{"weight": LEADING_WEIGHT_NAMES[row["name"]], **row} for row in comparison_with_paper()]}


def derivations_step(context: DemoContext) -> Section:
    copy_head = {attention: _copy_head_derivation(attention) for attention in ("linear", "softmax")}
    key = {attention: _key_equations(copy_head[attention], COPY_HEAD_KEY_RESULTS[attention]) for attention in copy_head}
    leading = _leading_coefficients()
    lines = ["### Copy head (model T, reconstruction)", ""]
    for attention, title in (("linear", "Linear attention"), ("softmax", "Softmax attention")):
        lines += [f"**{title}.**", ""]
        for equation in key[attention]:
            lines += [f"- {equation['step']}: `{equation['label']}`", "", f"$$ {equation['lhs']} = {equation['latex']} $$", ""]
    lines += ["The full derivation (every step, as SymPy derives it) is `emergence derive copy-head "
              "[--attention softmax]` and `docs/derivations/copy_head.md`.", "",
              "### Leading terms (Theorem 4.1 of arXiv 2601.19208)", "",
              markdown_table(["weight", "coefficient after s steps (SymPy summation)", "paper's form", "equal?",
                              "s = 1..6 (η = 1)"],
                             [[r["weight"], f"`{r['sympy']}`", f"`{r['paper_form']}`", r["equals_paper_form"],
                               ", ".join(map(str, r["values_s_1_to_6"]))] for r in leading["coefficients"]])]
    data = {"copy_head": {a: {"key_results": key[a], "steps": copy_head[a]["steps"]} for a in copy_head},
            "leading_terms": leading}
    equal = all(r["equals_paper_form"] for r in leading["coefficients"])
    return Section(
        "derivations", "1. Derivations", "\n".join(lines), data=data,
        derived="SymPy derives the copy-head W-marginal, population average, reduced actions S_lin(c1, cG) and "
                "S_soft(aG), the P1 condition (H_11 = 0), the copy-mode onset P_G and the leading softmax P* "
                "(dominant balance on the W_{-1} branch); and the leading-term step coefficients by summing the "
                "per-step gradient recursion.",
        reconstructed=RECONSTRUCTION,
        measured="Nothing is measured in this section.",
        comparison=f"The summed coefficients {'equal' if equal else 'DIFFER from'} the paper's s, C(s,2), "
                   "3C(s,4)+2C(s,3) (SymPy simplification of the difference). The copy-head results have no "
                   "published equations to compare with; sections 2-4 test them numerically.",
    )


# ---------------------------------------------------------------- phase diagrams

def _closed_forms(L: int, V: int) -> dict:
    """The kernels' closed-form P1 and copy-mode onset, and the derived softmax dominant balance, at 30 digits."""
    import mpmath

    from emergence.numerics.copy_head.reduced_action import default_convention
    from emergence.numerics.copy_head.scaling_certification import derived_reference, kernel_reference

    ctx = mpmath.mp.clone()
    ctx.dps = 30
    convention = default_convention()
    forms = {}
    for name, reference in (("P1", kernel_reference("linear-second-order", convention)),
                            ("P_G", kernel_reference("linear-crossover", convention)),
                            ("P_star_balance", derived_reference("softmax-first-order", convention))):
        value = None if reference is None else reference.value(L, V, ctx)
        forms[name] = None if value is None else float(value)
    return forms


def phase_diagrams_step(context: DemoContext) -> Section:
    from emergence.api import phase_diagram
    from emergence.numerics.copy_head.phase_diagram import check_grid

    L, V = PHASE_DIAGRAM["L"], PHASE_DIAGRAM["V"]
    grid = check_grid(PHASE_DIAGRAM["P_min"], PHASE_DIAGRAM["P_max"], PHASE_DIAGRAM["points"])
    records, plots = {}, []
    with _progress(2, "phase diagrams") as bar:
        for attention in ("linear", "softmax"):
            diagram = phase_diagram(attention, L, V, P=grid)
            records[attention] = diagram.to_dict()
            plots.append(plot_record(f"figures/phase_diagram_{attention}.png", "phase_diagram", diagram))
            bar.update(1)
    closed = _closed_forms(L, V)
    linear, softmax = records["linear"]["transitions"], records["softmax"]["transitions"]
    exponent = linear.get("critical_exponent") or {}
    rows = [
        ["linear", "second-order point P1", _fmt(linear.get("P1"), 6), _fmt(closed["P1"], 6),
         f"c1 ∝ (P − P1)^β, β = {_fmt(exponent.get('beta'))} ± {_fmt(exponent.get('spread'), 2)}"],
        ["linear", "copy-mode onset (crossover)", _fmt(linear.get("crossover"), 6), _fmt(closed["P_G"], 6),
         f"c_G = c1 at {_fmt(linear.get('crossover_literal'), 6)}"],
        ["softmax", "coexistence point P*", _fmt(softmax.get("P_star"), 6), _fmt(closed["P_star_balance"], 6),
         "metastable window " + ("—" if not softmax.get("spinodals") else
                                 f"[{_fmt(softmax['spinodals'][0], 4)}, {_fmt(softmax['spinodals'][1], 4)}]")],
    ]
    body = "\n".join([
        f"Global minimum of the reduced action on {PHASE_DIAGRAM['points']} log-spaced P in "
        f"[{PHASE_DIAGRAM['P_min']:g}, {PHASE_DIAGRAM['P_max']:g}], L = {L}, V = {V}, model T "
        "(σ² = 1, readout variance λ = 1/L, β = 1/L; linear attention A = G/√L).", "",
        markdown_table(["attention", "transition", "numerical minimum (P)", "derived closed / leading form (P)", "detail"], rows),
        "", "The closed forms are exact roots of the SymPy curvature conditions (P1, P_G); the softmax form is the "
        "derived dominant balance, an asymptotic form (so it is not exact at L = 256)."])
    data = {"sizes": {"L": L, "V": V}, "grid": PHASE_DIAGRAM, "diagrams": records, "closed_forms": closed,
            "plots": plots}
    draw_plots(plots, context.out)
    return Section(
        "phase_diagrams", "2. Phase diagrams of the copy head", body, data=data, figures=[p["file"] for p in plots],
        derived="The reduced actions and their derivatives are generated kernels (section 1); P1 and P_G in "
                "closed form; the softmax P* dominant balance.",
        reconstructed=RECONSTRUCTION,
        measured="Numerical global minimisation of the reduced actions on the P grid (multi-start Newton, "
                 "coexistence and spinodals by refinement) — a computation on the theory, not an experiment.",
        comparison=(f"Linear: a continuous transition at P1 = {_fmt(linear.get('P1'), 5)} (β = "
                    f"{_fmt(exponent.get('beta'), 3)}, mean-field 1/2), then a smooth copy onset at "
                    f"{_fmt(linear.get('crossover'), 5)}; softmax: a first-order jump at P* = "
                    f"{_fmt(softmax.get('P_star'), 5)} with no precursor (c_G stays 0 before it), as the paper's "
                    "abstract describes. Numerical vs closed-form P1: relative difference "
                    f"{_fmt(_relative(linear.get('P1'), closed['P1']), 2)}."),
    )


def _relative(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return abs(a - b) / abs(b)


# ---------------------------------------------------------------- scaling

def scaling_settings(context: DemoContext) -> dict:
    return {"scaling": mode(context)["scaling"]}


def scaling_step(context: DemoContext) -> Section:
    from emergence.api import scaling
    from emergence.numerics.copy_head.scaling_claims import CLAIMS

    settings = mode(context)["scaling"]
    claims, verdicts = [], []
    with _progress(len(CLAIMS), "scaling claims") as bar:
        for claim in CLAIMS:
            verdict = scaling(claim, dps=settings["dps"], fast=settings["fast"])
            verdicts.append(verdict)
            claims.append({"claim": verdict.claim, "law": verdict.law, "holds": verdict.holds,
                           "tolerance": verdict.tolerance, "dps": verdict.dps, "sweeps": verdict.sweeps(),
                           **{k: verdict.details[k] for k in ("criterion", "certification", "asymptotic",
                                                               "effective_log_power") if k in verdict.details}})
            bar.update(1)
    rows = []
    for claim in claims:
        for sweep in claim["sweeps"]:
            rows.append([
                CLAIMS[claim["claim"]].text, f"{sweep['variable']} = {sweep['sizes'][0]}…{sweep['sizes'][-1]} "
                f"({len(sweep['sizes'])})", _fmt(sweep["exponent"]), _fmt(sweep["spread"], 2),
                _fmt(sweep["law_exponent"]), f"{sweep['residual_exponent']:+.3f} (±{claim['tolerance']:g})",
                _fmt(sweep["ratio"][-1]), _fmt(sweep["reference_ratio"][-1]) if sweep.get("reference_ratio") else "—",
                "yes" if claim["holds"] else "no",
            ])
    plots = [plot_record("figures/scaling_ratios.png", "scaling_ratios", verdicts)]
    draw_plots(plots, context.out)
    body = "\n".join([
        f"Each transition is located on the reduced action at {settings['dps']} digits on exponentially spaced "
        f"sizes{' (fast subset of sizes)' if settings['fast'] else ''}.", "",
        markdown_table(["claim", "sweep (sizes)", "measured local exponent d ln P/d ln x (largest sizes)",
                        "spread (last 3)", "law's own local exponent", "residual exponent of P/law (tol.)",
                        "P/law at largest size", "P/derived form at largest size", "holds?"], rows),
        "", "For the log law the local exponent of L ln²L itself is 1 + 2/ln L, so the measured exponent is "
        "compared with the law's own local exponent at the same sizes. Power laws: the verdict is the residual "
        "exponent of P/law within the tolerance, a positive fitted constant and agreement with the derived form "
        "where one exists. The log law: the data agree with the derived balance, the full reduced action agrees "
        "with it up to L = 1e12, and the law's power of ln L matches the balance's at ln L = 1e3…1e4 "
        "(numerics/copy_head/scaling.py, docs/copy_head_scaling.md)."])
    holds = sum(c["holds"] for c in claims)
    return Section(
        "scaling", "3. The three scaling claims", body, data={"claims": claims, "settings": settings, "plots": plots},
        figures=[p["file"] for p in plots],
        derived="P1 and P_G closed forms and the softmax dominant balance (section 1) serve as derived references.",
        reconstructed=RECONSTRUCTION + " The laws are the paper's claims (input), not fitted.",
        measured="Transition points of the reduced actions at high precision across sizes; local log-log "
                 "exponents, their spread over the three largest sizes, and sub-leading fits.",
        comparison=f"{holds} of {len(claims)} claims hold for the reconstructed model by the stated criterion.",
    )


# ---------------------------------------------------------------- copy task

def copy_task_settings(context: DemoContext) -> dict:
    return {"copy_task": mode(context)["copy_task"], "seed": context.seed}


def _copy_task_experiment(experiment: dict, context: DemoContext) -> list:
    """Adam (and SGLD) runs of one demo experiment (:func:`emergence.api.run_copy_experiment`);
    the ``bisections`` are Adam's (SGLD's brackets are not the theory's verdict, :data:`SGLD_AGAINST_SADDLE`)."""
    from emergence.api import CopyExperiment, run_copy_experiment
    from emergence.validation.copy_task.copy_experiment import grid_around_prediction

    budget = {key: experiment[key] for key in
              ("seeds", "adam_steps", "sgld_burn_in", "sgld_draws", "sgld_thin", "chains", "objective")
              if key in experiment}
    P = (grid_around_prediction(experiment["attention"], experiment["L"], experiment["V"])
         if experiment["P"] == AROUND_PREDICTION else experiment["P"])
    return [run_copy_experiment(CopyExperiment(
        experiment["attention"], experiment["L"], experiment["V"], tuple(P), optimizer=optimizer,
        seed=context.seed, device="cpu", workers=1 if context.quick else 2,
        out=str(context.out / "steps" / "copy_task_runs"),
        bisections=experiment.get("bisections", 0) if optimizer == "adam" else 0, **budget))
        for optimizer in experiment.get("optimizers", ("adam", "sgld"))]


def _experiment_data(experiment: dict, runs: list) -> dict:
    """The section's record of one experiment: the theory once, measurements and agreement per optimizer."""
    first = runs[0]
    return {"attention": first.attention, "L": first.L, "V": first.V, "settings": experiment,
            "predicted": first.predicted, "measured": {r.optimizer: r.measured for r in runs},
            "agreement": {r.optimizer: r.agreement for r in runs}}


SAMPLERS = {"adam": "Adam", "sgld": "SGLD"}
"""The copy task's samplers, in table order, with their names in the report."""

COPY_TASK_METHOD = (
    "Measured transitions are grid brackets (validation/copy_task/analysis.py: the interval where c1 departs "
    "from zero by 0.05, or of the steepest rise of c_G in ln P / of a_G, reported only when the order parameter "
    "rises by at least 0.05), so their resolution is the grid spacing; Adam's brackets are then narrowed by "
    "bisection (extra points at the bracket's geometric midpoint: a softmax jump every time, a linear transition "
    "while its bracket straddles a factor 2). Linear P1 is also fitted to the onset law c1^(1/beta) = a(P - P1). "
    "Adam agrees when every point converged, every bracket (and the fitted P1) lies within a factor 2 of the "
    "theory and no transition is missing, unexpected, unresolved or untested; for softmax besides when the grid "
    "has at least 8 points spanning [P*/3, 3P*], a_G after the jump lies within 0.1 of the theory, and two "
    "minima appear inside the predicted spinodal window. SGLD rows compare a posterior with the saddle (a MAP) "
    "and are not verdicts on the theory. "
    "Theory curves are the population-level global minimum (train = test); the "
    "measured loss is on held-out sequences, per position (per-sequence loss / L).")
"""How the copy-task section measures transitions and when Adam agrees (the section's closing paragraph)."""


def _with_reasons(text: str, why: str) -> str:
    """``text``, followed by the reasons in parentheses when there are any."""
    return text + (f" ({why})" if why else "")


def _sampler_summary(optimizer: str, passes: bool | None, why: str) -> str:
    """One sampler's verdict in the comparison line: Adam agrees or not; SGLD is compared, not judged."""
    if optimizer == "sgld":
        return (f"SGLD {'matches' if passes else 'differs from'} the saddle ({SGLD_AGAINST_SADDLE}"
                + (f"; {why}" if why else "") + ")")
    return _with_reasons(f"Adam {'agrees' if passes else 'does not agree'}", why)


def _optimizers(experiment: dict) -> list[str]:
    """The samplers an experiment ran, in table order."""
    return [o for o in SAMPLERS if o in experiment["agreement"]]


def _transition_cells(experiment: dict, optimizer: str, name: str) -> list[str]:
    """One sampler's cells for transition ``name``: grid bracket, ratio to the theory, verdict."""
    from emergence.validation.copy_task.analysis import quote_bracket

    verdict = experiment["agreement"][optimizer].get("transitions", {}).get(name, {})
    ratio = verdict.get("ratio")
    return [quote_bracket((experiment["measured"][optimizer].get(name) or {}).get("bracket")),
            "—" if ratio is None else f"{_fmt(ratio[0], 2)}–{_fmt(ratio[1], 2)}",
            verdict.get("status", "—")]


def _transition_table(experiment: dict) -> str:
    """The table of one experiment: a row per transition, the theory's P and each sampler's cells."""
    names = ("P_star",) if experiment["attention"] == "softmax" else ("P1", "crossover")
    optimizers = _optimizers(experiment)
    rows = [[name, _fmt(experiment["predicted"]["transitions"].get(name), 3)]
            + [cell for optimizer in optimizers for cell in _transition_cells(experiment, optimizer, name)]
            for name in names]
    return markdown_table(["transition", "theory (P)"] + [
        f"{SAMPLERS[o]} {column}" for o in optimizers
        for column in ("grid bracket (P)", "/ theory", "verdict")], rows)


def _experiment_header(experiment: dict) -> str:
    """The line that states an experiment's sizes, grid, seeds, objective and sampler settings."""
    e, settings = experiment, experiment["settings"]
    converged = e["measured"]["adam"].get("converged_fraction", [])
    sgld = (f"; SGLD burn-in {settings['sgld_burn_in']}, {settings['sgld_draws']} draws every "
            f"{settings['sgld_thin']} steps, {settings['chains']} chain(s) per seed and start"
            if "sgld" in _optimizers(e) else "")
    bisection = e["measured"]["adam"].get("bisection", {}).get("added_P") or []
    return (f"**{e['attention']} attention, L = {e['L']}, V = {e['V']}**, P ∈ {e['measured']['adam']['P']}"
            + (f" (grid: {settings['P']}; bisection points {bisection})" if bisection else "")
            + f", {settings['seeds']} seed(s) × 2 starts, objective: {settings['objective']}; "
            f"Adam {settings['adam_steps']} steps "
            f"(converged fraction per P: {', '.join(_fmt(c, 2) for c in converged)}){sgld}.")


def _rms_line(experiment: dict) -> str:
    """RMS of measured − predicted order parameters, per sampler."""
    rms = {o: experiment["agreement"][o].get("order_parameter_rms", {}) for o in _optimizers(experiment)}
    return "RMS of measured − predicted order parameters over the converged grid: " + "; ".join(
        f"{SAMPLERS[o]} c1 {_fmt(rms[o].get('c1'), 2)}, cG {_fmt(rms[o].get('cG'), 2)}" for o in rms) + "."


def _sampler_lines(experiment: dict, optimizer: str) -> list[str]:
    """One sampler's bullets: where the jump lands, the two-minima window, and its verdict (or comparison)."""
    from emergence.validation.copy_task.analysis import quote_bracket

    agreement = experiment["agreement"][optimizer]
    name, passes, why = SAMPLERS[optimizer], agreement.get("passes"), "; ".join(agreement.get("reasons", []))
    lines = []
    if agreement.get("landing"):
        lines.append(f"- {name}: the jump lands: {agreement['landing']['summary']}.")
    window = agreement.get("hysteresis")
    if window:
        two = window["measured_two_minima"]
        lines.append(f"- {name}: two minima (hysteresis) at P "
                     f"{quote_bracket(two) if two else 'nowhere'}; predicted spinodal window "
                     f"{quote_bracket(window['window'])}.")
    if optimizer == "sgld":
        lines.append(_with_reasons(f"- SGLD against the saddle (not a verdict: {SGLD_AGAINST_SADDLE}): "
                                   f"{'matches' if passes else 'differs'}", why) + ".")
    else:
        lines.append(_with_reasons(f"- {name} passes: {passes}", why) + ".")
    return lines


def _experiment_lines(experiment: dict) -> list[str]:
    """One experiment's part of the section: header, transition table, RMS line, sampler bullets."""
    lines = [_experiment_header(experiment), "", _transition_table(experiment), "", _rms_line(experiment), ""]
    for optimizer in _optimizers(experiment):
        lines += _sampler_lines(experiment, optimizer)
    return lines + [""]


def _experiment_summary(experiment: dict) -> str:
    """One experiment's verdicts in the section's comparison line."""
    return f"{experiment['attention']}: " + ", ".join(
        _sampler_summary(o, experiment["agreement"][o].get("passes"),
                         "; ".join(experiment["agreement"][o].get("reasons", [])))
        for o in _optimizers(experiment))


def copy_task_step(context: DemoContext) -> Section:
    """Train the copy task per experiment of the mode, draw its figure and set its verdicts beside the theory."""
    runs = [_copy_task_experiment(e, context) for e in mode(context)["copy_task"]]
    experiments = [_experiment_data(e, r) for e, r in zip(mode(context)["copy_task"], runs)]
    plots = [plot_record(f"figures/copy_task_{r[0].attention}.png", "copy_task", r) for r in runs]
    draw_plots(plots, context.out)
    body = "\n".join([line for e in experiments for line in _experiment_lines(e)] + [COPY_TASK_METHOD])
    return Section(
        "copy_task", "4. Copy-task validation: Adam and SGLD against the theory", body,
        data={"experiments": experiments, "plots": plots}, figures=[p["file"] for p in plots],
        derived="Theory curves: the reduced-action phase diagram at the trained sizes (section 2's machinery).",
        reconstructed=RECONSTRUCTION + " The trained models use the same model T and potential.",
        measured="Order parameters c1, c_G of trained attention and held-out loss, mean ± std over seeds / draws. "
                 "Both samplers act on the readout-marginal action S(W_QK) (the readout integrated out exactly, "
                 "the theory's first step; `--objective marginal`): Adam gives its MAP from uniform and copy "
                 "starts (the lower action kept), SGLD its posterior means.",
        comparison="; ".join(_experiment_summary(e) for e in experiments)
                   + ". (The reduced theory is a saddle point on the two order parameters: "
                   "the MAP tests it directly, while SGLD's posterior means also carry the fluctuations of all "
                   "other attention weights, which the saddle drops; docs/notes/validation_copy_head.md measures both.)",
    )


# ---------------------------------------------------------------- leading terms

def corpus_settings(context: DemoContext) -> dict:
    return {"corpus": context.corpus_identity(), "T": LEADING_T}


def leading_terms_settings(context: DemoContext) -> dict:
    return corpus_settings(context) | {"runs": mode(context)["leading_terms"]}


LEADING_TERM_FIELDS = ("corpus", "steps", "loss", "initial_loss", "step_limit", "within_window", "size_conditions",
                       "cosine", "min_cosine", "min_cosine_within_window", "relative_error_slope",
                       "relative_error_slope_late", "causal_removal")
"""The fields of a leading-term validation that the demo keeps per run."""


def _leading_terms_run(corpus: str, settings: dict, context: DemoContext):
    """Train one leading-term run (rate ``settings["lr"]``); its validation record and the fields the demo keeps."""
    from emergence.api import validate_leading_terms

    with _progress(settings["epochs"], f"leading terms lr={settings['lr']:g}") as bar:
        validation = validate_leading_terms(
            corpus, progress=lambda done, total, loss: bar.update(1), layers=settings["layers"],
            lr=settings["lr"], epochs=settings["epochs"], context_length=LEADING_T,
            max_sequences=settings["max_sequences"], seed=context.seed, device="cpu")
    result = validation.to_dict()
    return validation, {"lr": settings["lr"], "layers": settings["layers"]} | {
        key: result[key] for key in LEADING_TERM_FIELDS}


def _cosine_rows(runs: list[dict]) -> list[list[str]]:
    """Per run and weight: min cosine per layer, inside the window, error slope and causal-removal losses."""
    rows = []
    for run in runs:
        for name in ("W_O", "V", "W", "P"):
            per_layer = [min((v for v in layer if v is not None), default=None) for layer in run["cosine"][name]]
            rows.append([f"{run['lr']:g}", name, " / ".join(_cosine(v) for v in per_layer),
                         _cosine(run["min_cosine_within_window"][name]), _fmt(run["relative_error_slope_late"][name], 3),
                         " / ".join(_fmt(v, 5) for v in run["causal_removal"][name])])
    return rows


def _leading_terms_body(corpus: str, runs: list[dict]) -> str:
    """The leading-term section's text: corpus and window, the cosine table, trained losses, unmet conditions."""
    first = runs[0]
    unmet = [k for k, ok in first["size_conditions"].items() if not ok]
    return "\n".join([
        f"Corpus: {corpus} (V = {first['corpus']['V']}, T = {first['corpus']['T']}, N = {first['corpus']['N']} "
        f"windows); plain full-batch SGD from zero init, float64. Theorem window s ≤ "
        + ", ".join(f"{r['step_limit']:.3g} (lr {r['lr']:g})" for r in runs) + ".", "",
        markdown_table(["lr", "weight", "min cosine per layer (all epochs)", "min cosine inside window",
                        "slope of log rel. error vs log sη (later half; theory 1)",
                        "loss with the weight projected off its leading term (per layer)"], _cosine_rows(runs)),
        "", "Trained loss " + ", ".join(f"{r['causal_removal']['trained']:.4f} (lr {r['lr']:g})" for r in runs)
        + f"; initial loss ln V = {first['initial_loss']:.4f}."
        + (f" The theorem's size conditions not met here: {', '.join(unmet)} (a small demo corpus)." if unmet else "")])


def leading_terms_step(context: DemoContext) -> Section:
    """Train each leading-term run of the mode, draw the cosines and tabulate them per layer."""
    corpus = "synthetic" if context.corpus is None else str(context.corpus)
    validations, runs = [], []
    for settings in mode(context)["leading_terms"]:
        validation, run = _leading_terms_run(corpus, settings, context)
        validations.append(validation)
        runs.append(run)
    plots = [plot_record("figures/leading_term_cosines.png", "leading_cosines", validations)]
    draw_plots(plots, context.out)
    body = _leading_terms_body(corpus, runs)
    return Section(
        "leading_terms", "5. Leading-term validation (cosines per layer)", body,
        data={"runs": runs, "plots": plots}, figures=[p["file"] for p in plots],
        derived="Step coefficients s, C(s,2), 3C(s,4)+2C(s,3) (section 1) times the corpus statistics B̄, "
                "Φ̄ᵀB̄ᵀ, Q̄, Δ computed from the training windows.",
        reconstructed="Nothing: Definition 3.1 and Theorem 4.1 of arXiv 2601.19208 are restated; the error "
                      "bounds and window are quoted, not derived.",
        measured="Weights of the trained attention-only transformer after every epoch; Frobenius cosines and "
                 "relative errors per layer; causal-removal losses.",
        comparison=" ".join(
            f"lr {r['lr']:g}: min cosine W_O {_cosine(r['min_cosine']['W_O'])}, V {_cosine(r['min_cosine']['V'])}, "
            f"W {_cosine(r['min_cosine']['W'])}, P {_cosine(r['min_cosine']['P'])} "
            f"({sum(r['within_window'])} of {len(r['steps'])} epochs inside the window)." for r in runs),
    )


# ---------------------------------------------------------------- associations

def planted_queries() -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, query, planted partners) for every planted association of the story corpus."""
    from emergence.numerics.corpus.stories import PLANTED_ASSOCIATIONS

    queries = [("bigram", adjective, tuple(nouns)) for adjective, nouns in PLANTED_ASSOCIATIONS["bigram"].items()]
    queries += [("context", animal, tuple(habitat)) for animal, habitat in PLANTED_ASSOCIATIONS["context"].items()]
    for group in PLANTED_ASSOCIATIONS["interchangeable"].values():
        queries += [("interchangeability", member, tuple(m for m in group if m != member)) for member in group]
    return queries


def _recovered(kind: str, planted: tuple[str, ...], ranked: list[str]) -> bool:
    """Bigram: the planted nouns are the top len(nouns); context: the habitat is in the top 3;
    interchangeability: the group, query included (it is in its own list), is inside the top
    len(group) + 3 (the story-corpus tests' criteria)."""
    if kind == "bigram":
        return set(ranked[: len(planted)]) == set(planted)
    if kind == "context":
        return set(planted) <= set(ranked[:3])
    return set(planted) <= set(ranked[: len(planted) + 4])


PLANTED_DEPTH = 8
"""How many neighbours of a planted query are ranked (the recovery criteria look at most this deep)."""


def _planted_associations(stats, tokens: list[str]) -> tuple[str, str, dict]:
    """The story corpus's planted associations against the statistics' top neighbours: table, comparison, data."""
    from emergence.numerics.leading_terms.associations import top_association_scores

    entries = []
    for kind, query, partners in planted_queries():
        scores = top_association_scores(stats, tokens, query, PLANTED_DEPTH)[kind]
        ranked = [t for t, _ in scores]
        entries.append({"kind": kind, "query": query, "planted": list(partners), "top": scores[:TOP],
                        "ranked": ranked, "recovered": _recovered(kind, partners, ranked)})
    rows = [[e["kind"], e["query"], ", ".join(e["planted"]), ", ".join(f"{t} ({s:.3g})" for t, s in e["top"]),
             "yes" if e["recovered"] else "no"] for e in entries]
    recovered = sum(e["recovered"] for e in entries)
    table = markdown_table(["statistic", "query", "planted partners", f"top {TOP} (score)", "recovered?"], rows)
    comparison = f"{recovered} of {len(entries)} planted associations are recovered."
    return table, comparison, {"corpus": "synthetic", "entries": entries, "recovered": recovered,
                               "total": len(entries)}


def _corpus_neighbours(stats, tokens: list[str], corpus: str) -> tuple[str, str, dict]:
    """A user corpus (no planted associations): the top neighbours of its most frequent words."""
    from emergence.numerics.leading_terms.associations import ASSOCIATION_KINDS, top_association_scores

    words = [t for t in tokens if t.isalpha() and len(t) >= 3][:8]
    entries = [{"query": q, **{k: v[:TOP] for k, v in top_association_scores(stats, tokens, q, TOP).items()}}
               for q in words]
    rows = [[e["query"]] + [", ".join(t for t, _ in e[kind]) for kind in ASSOCIATION_KINDS] for e in entries]
    table = markdown_table(["query (most frequent words)"] + [f"{k} top {TOP}" for k in ASSOCIATION_KINDS], rows)
    comparison = "No planted associations are known for this corpus; the table lists the neighbours found."
    return table, comparison, {"corpus": corpus, "entries": entries}


def associations_step(context: DemoContext) -> Section:
    """The top neighbours of the three leading-term statistics, checked against the planted ones where known."""
    from emergence.numerics.leading_terms.basis_statistics import basis_statistics
    from emergence.numerics.corpus.documents import load_corpus

    source = "synthetic" if context.corpus is None else context.corpus
    corpus = load_corpus(source, context_length=LEADING_T, seed=context.seed)
    stats = basis_statistics(corpus.sequences, corpus.vocabulary.size)
    tokens = corpus.vocabulary.tokens
    if context.corpus is None:
        table, comparison, data = _planted_associations(stats, tokens)
    else:
        table, comparison, data = _corpus_neighbours(stats, tokens, str(context.corpus))
    data["sizes"] = {"V": corpus.vocabulary.size, "T": corpus.context_length, "N": corpus.num_sequences}
    body = "\n".join([
        f"Corpus: {'the built-in story corpus (numerics/corpus/stories.py, seed ' + str(context.seed) + ')' if context.corpus is None else context.corpus}; "
        f"V = {corpus.vocabulary.size}, T = {corpus.context_length}, N = {corpus.num_sequences} windows. Bigram: row of B̄ "
        "(what follows the query); interchangeability: row of B̄ᵀB̄ (tokens preceded by the same tokens); "
        "context: row of Φ̄ (tokens whose earlier presence predicts the query).", "", table])
    return Section(
        "associations", "6. Top associations from the corpus", body, data=data,
        derived="Nothing new: the three statistics are the leading-term directions of section 5.",
        reconstructed="Nothing.",
        measured="Exact corpus statistics B̄, B̄ᵀB̄, Φ̄ of the windows (numerics/leading_terms/basis_statistics.py).",
        comparison=comparison,
    )


def no_settings(context: DemoContext) -> dict:
    """Settings of a step that depends on nothing but the engine's code."""
    return {}


def phase_diagram_settings(context: DemoContext) -> dict:
    return {"phase_diagram": PHASE_DIAGRAM}


def demo_steps() -> list[DemoStep]:
    """The demo's steps, in report order."""
    return [
        DemoStep("derivations", "derivations", derivations_step, no_settings),
        DemoStep("phase_diagrams", "phase diagrams", phase_diagrams_step, phase_diagram_settings),
        DemoStep("scaling", "scaling claims", scaling_step, scaling_settings),
        DemoStep("copy_task", "copy-task validation", copy_task_step, copy_task_settings),
        DemoStep("leading_terms", "leading-term validation", leading_terms_step, leading_terms_settings),
        DemoStep("associations", "associations", associations_step, corpus_settings),
    ]


def check_corpus(path: Path) -> None:
    """Fail early, in one line, on a corpus file that is missing, not UTF-8, empty or too short."""
    from emergence.numerics.corpus.documents import CorpusTooShortError, load_corpus
    from emergence.base.errors import EmergenceError

    try:
        load_corpus(Path(path), context_length=LEADING_T)
    except CorpusTooShortError:
        raise EmergenceError(f"corpus {path}: too short for the demo, which needs a document of at least "
                             f"{LEADING_T + 1} tokens (T = {LEADING_T})") from None
