r"""Every figure of the engine, drawn once: ``figure(record, ax=None) -> Figure``.

The command line (``--plot``), the demo report and a notebook (``record.plot()``) all call
these functions on the records of :mod:`emergence.records`, so one record gives one picture
whichever way it is drawn.  Nothing here selects a matplotlib backend: a figure made here is
a plain :class:`matplotlib.figure.Figure` (not registered with ``pyplot``), which a notebook
displays and :func:`save_figure` writes with the non-interactive renderer of the file's format.

``ax``: ``None`` makes a new figure with every panel; one :class:`~matplotlib.axes.Axes`
draws the first panel into it; a sequence (or NumPy array) of axes draws one panel into each.

Conventions: the size on a log axis is :math:`P` (training sequences); axis labels are
mathematical notation with units ("dimensionless" where a quantity has none); every vertical
line is a transition with a legend entry (:data:`TRANSITIONS`); legends sit outside the axes
so that they hide no data.

>>> sorted(TRANSITIONS)
['P1', 'P_star', 'crossover', 'crossover_literal']
>>> math_label("L**(3/2)*V**(1/2)")
'$L^{3/2}\\,V^{1/2}$'
>>> math_label("L*log(L)**2")
'$L\\,\\ln^{2} L$'
>>> math_label("V**2")
'$V^{2}$'
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

P_AXIS = "training sequences $P$ (log scale)"
ORDER_AXIS = "order parameter (dimensionless)"
LOSS_AXIS = "test loss per position (squared error)"
EXACT_FLOOR = 1e-17
"""Where an exact match (1 - cosine = 0) is drawn on the cosine figure's log axis."""

TRANSITIONS: dict[str, tuple[str, str]] = {
    "P1": ("second-order point $P_1$", ":"),
    "crossover": ("copy-mode onset $P_G$", "--"),
    "crossover_literal": ("$c_G = c_1$", "-."),
    "P_star": ("coexistence point $P^*$", "-"),
}
"""Label and line style of each transition of the copy-head theory."""
METASTABLE = "metastable window (between the spinodals)"
ORDER_PARAMETERS = {"c1": "$c_1$ (uniform pooling)", "cG": "$c_G$ (copy)",
                    "aG": "$a_G$ (attention on the previous token)",
                    "copy_fraction": r"$\cos^2(A, S)$ (copy fraction)"}
COLOURS = {"c1": "tab:blue", "cG": "tab:red", "aG": "tab:green", "copy_fraction": "tab:purple"}
OPTIMIZERS = {"adam": ("o", "Adam MAP"), "sgld": ("s", "SGLD mean")}
SIZE_NAMES = {"L": "sequence length $L$", "V": "vocabulary size $V$"}


def math_label(expression: str) -> str:
    """A SymPy-syntax product of powers (``L**(3/2)*V**(1/2)``, ``L*log(L)**2``) as mathtext."""
    parts = []
    for factor in re.split(r"(?<!\*)\*(?!\*)", expression):
        base, _, power = factor.partition("**")
        power = power.strip("()")
        logarithm = re.fullmatch(r"log\((\w+)\)", base)
        if logarithm:
            parts.append(rf"\ln^{{{power}}} {logarithm.group(1)}" if power else rf"\ln {logarithm.group(1)}")
        else:
            parts.append(f"{base}^{{{power}}}" if power else base)
    return "$" + r"\,".join(parts) + "$"


def new_figure(panels: int, ax=None, *, columns: int | None = None, size: tuple[float, float] = (5.0, 4.0)):
    """(figure, list of ``panels`` axes): new ones, or the given axes (see the module docstring)."""
    if ax is None:
        from matplotlib.figure import Figure

        columns = columns or panels
        rows = math.ceil(panels / columns)
        figure = Figure(figsize=(size[0] * columns, size[1] * rows), layout="constrained")
        axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
        return figure, axes[:panels]
    axes = list(ax.flat) if hasattr(ax, "flat") else list(ax) if isinstance(ax, Sequence) else [ax]
    return axes[0].figure, axes[:panels]


def figure_format(path: str | Path, format: str | None = None) -> str:
    """The image format of ``path`` (its suffix, default PNG); a one-line
    :class:`~emergence.base.errors.EmergenceError` when matplotlib cannot write it (check before long work)."""
    from matplotlib.figure import Figure

    from emergence.base.errors import EmergenceError

    format = (format or Path(path).suffix.lstrip(".") or "png").lower()
    supported = Figure().canvas.get_supported_filetypes()
    if format not in supported:
        raise EmergenceError(f"cannot write a figure as .{format}; use one of {', '.join(sorted(supported))}")
    return format


def save_figure(figure, path: str | Path, format: str | None = None) -> Path:
    """Write ``figure`` atomically (format from the suffix, default PNG), without a timestamp, so the
    same record gives the same bytes; return the path."""
    from emergence.base.io import atomic_path

    path = Path(path)
    format = figure_format(path, format)
    metadata = {"Software": None} if format == "png" else {"Creator": None} if format in ("pdf", "svg") else None
    if format == "pdf":
        metadata["CreationDate"] = None
    elif format == "svg":
        metadata["Date"] = None
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format=format, dpi=110, metadata=metadata)
    return path


def _values(values: list) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def _log_x(axis) -> None:
    """A logarithmic x axis with labels on the decades only (minor labels overlap)."""
    from matplotlib.ticker import NullFormatter

    axis.set_xscale("log")
    axis.xaxis.set_minor_formatter(NullFormatter())


def _legend(axis, **options) -> None:
    """A legend beside the axes (never over the data); nothing when no artist is labelled."""
    if axis.get_legend_handles_labels()[0]:
        axis.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=7, **options)


def _mark_transitions(axes, transitions: dict | None) -> None:
    """One labelled vertical line per transition (label on the first axis) and the metastable window."""
    transitions = transitions or {}
    for key, (label, style) in TRANSITIONS.items():
        value = transitions.get(key)
        if isinstance(value, (int, float)):
            for axis in axes:
                axis.axvline(value, color="0.35", linestyle=style, linewidth=1.1,
                             label=f"{label} = {value:.4g}" if axis is axes[0] else None)
    if transitions.get("spinodals"):
        low, high = transitions["spinodals"]
        for axis in axes:
            axis.axvspan(low, high, color="orange", alpha=0.15, label=METASTABLE if axis is axes[0] else None)


def phase_diagram_figure(record, ax=None):
    """Order parameters (first panel) and predicted loss (second) of the reduced action's global minimum
    against :math:`P`, with the transitions."""
    figure, axes = new_figure(2, ax, columns=1, size=(7.5, 3.2))
    top = axes[0]
    top.semilogx(record.P, _values(record.c1), color=COLOURS["c1"], label=ORDER_PARAMETERS["c1"])
    top.semilogx(record.P, _values(record.cG), color=COLOURS["cG"],
                 label=ORDER_PARAMETERS["aG" if record.attention == "softmax" else "cG"])
    top.set_ylabel(ORDER_AXIS)
    top.set_title(f"{record.attention} attention, $L = {record.L}$, $V = {record.V}$ "
                  f"(reconstructed model {record.convention.get('architecture', 'T')})", fontsize=10)
    if len(axes) > 1:
        bottom = axes[1]
        bottom.semilogx(record.P, _values(record.loss), color="black", label="predicted test loss")
        bottom.set_ylabel(LOSS_AXIS)
        bottom.sharex(top)
        top.tick_params(labelbottom=False)
    _mark_transitions(axes, record.transitions)
    axes[-1].set_xlabel(P_AXIS)
    for axis in axes:
        _legend(axis)
    return figure


def _theory_curves(axis, predicted: dict, keys: tuple[str, ...]) -> None:
    """The theory's order parameters ``keys`` against P, as lines."""
    for key in keys:
        if predicted.get(key):
            axis.plot(predicted["P"], _values(predicted[key]), "-", color=COLOURS[key],
                      label=f"theory {ORDER_PARAMETERS[key]}")


def _measured_points(axis, optimizer: str, measured: dict, keys: tuple[str, ...]) -> None:
    """One sampler's measured order parameters (mean ± std) and, for softmax, a_G from each start."""
    marker, name = OPTIMIZERS[optimizer]
    hollow = "none" if optimizer == "sgld" else None
    for key in keys:
        if f"{key}_mean" not in measured:
            continue
        axis.errorbar(measured["P"], _values(measured[f"{key}_mean"]), yerr=_values(measured[f"{key}_std"]),
                      fmt=marker, capsize=3, color=COLOURS[key], mfc=hollow, label=f"{name} {ORDER_PARAMETERS[key]}")
    for start, triangle in (("uniform", "v"), ("copy", "^")):
        if f"aG_{start}_mean" in measured:
            axis.plot(measured["P"], _values(measured[f"aG_{start}_mean"]), triangle, mfc="none",
                      color=COLOURS["aG"], label=f"{name} $a_G$ from the {start} start")


def _loss_panel(axis, predicted: dict | None, measured_by: dict) -> None:
    """The theory's population loss and each sampler's held-out loss (mean ± std) against P."""
    if predicted is not None:
        axis.plot(predicted["P"], _values(predicted["loss"]), "-", color="black", label="theory (population)")
    for optimizer, measured in measured_by.items():
        marker, name = OPTIMIZERS[optimizer]
        axis.errorbar(measured["P"], _values(measured["loss_mean"]), yerr=_values(measured["loss_std"]),
                      fmt=marker, capsize=3, color="black", mfc="none" if optimizer == "sgld" else None,
                      label=f"{name} (held out)")
    axis.set_ylabel(LOSS_AXIS)


def copy_task_figure(records, ax=None):
    """Measured order parameters (first panel) and held-out loss (second) of trained copy-task models,
    mean ± std over seeds or draws, with the theory's curves and transitions.

    ``records``: one :class:`~emergence.records.CopyHeadValidation` or several at the same sizes
    (Adam and SGLD, say), drawn together with the theory of the first.
    """
    records = list(records) if isinstance(records, (list, tuple)) else [records]
    record = records[0]
    measured_by = {r.optimizer: r.measured for r in records}
    figure, axes = new_figure(2, ax, size=(6.2, 4.2))
    left = axes[0]
    predicted = record.predicted
    # softmax: a_G and the copy fraction say where the jump lands (c_1 = 1 - c_G carries nothing new)
    keys = ("aG", "copy_fraction") if record.attention == "softmax" else ("c1", "cG", "copy_fraction")
    if predicted is not None:
        _theory_curves(left, predicted, keys)
    for optimizer, measured in measured_by.items():
        _measured_points(left, optimizer, measured, keys)
    left.set_ylabel(ORDER_AXIS)
    if len(axes) > 1:
        _loss_panel(axes[1], predicted, measured_by)
    _mark_transitions(axes, None if predicted is None else predicted["transitions"])
    for axis in axes:
        _log_x(axis)
        axis.set_xlabel(P_AXIS)
        _legend(axis)
    objective = record.settings.get("objective", "joint")
    left.set_title(f"copy task, {record.attention} attention, $L = {record.L}$, $V = {record.V}$ "
                   f"({objective} objective): trained vs reconstructed theory", fontsize=9, loc="left")
    return figure


COSINE_STYLES = {"W_O": ("tab:purple", "-"), "V": ("tab:blue", "--"), "W": ("tab:orange", "-."), "P": ("tab:green", ":")}
"""Colour and line style of each leading-term weight in the cosine figure."""

LAYER_MARKERS = ("o", "x", "+", "^", "s")
"""Marker of each layer in the cosine figure (cycled)."""


def _cosine_gaps(values) -> tuple[list[float], bool]:
    r""":math:`1 - \cos` per epoch, floored at :data:`EXACT_FLOOR` (NaN where undefined), and whether any is exact."""
    gaps, exact = [], False
    for v in _values(values):
        gap = 1 - v if v == v else float("nan")
        exact = exact or gap <= 0
        gaps.append(max(gap, EXACT_FLOOR) if gap == gap else gap)
    return gaps, exact


def _layer_curve(axis, epochs: list[int], component: str, layer: int, values, row: int) -> tuple[bool, bool]:
    r"""One layer's :math:`1 - \cos` curve of ``component``, with ticks where it is undefined;
    returns (some cosine is exact, some is undefined)."""
    colour, style = COSINE_STYLES.get(component, ("black", "-"))
    name = "$W_O$" if component == "W_O" else f"${component}^{{({layer + 1})}}$"
    gaps, exact = _cosine_gaps(values)
    axis.semilogy(epochs, gaps, style, color=colour, marker=LAYER_MARKERS[layer % len(LAYER_MARKERS)],
                  markersize=7 - 2 * min(layer, 2), markerfacecolor="none",
                  linewidth=2.6 - 1.2 * min(layer, 1), alpha=0.85, label=name)
    missing = [e for e, g in zip(epochs, gaps) if g != g]
    if missing:
        axis.plot(missing, [0.95 - 0.05 * row] * len(missing), "|", color=colour, markersize=7,
                  transform=axis.get_xaxis_transform())
    return exact, bool(missing)


def _cosine_panel(axis, run) -> None:
    """One run's panel: every weight's curve per layer, the exact-match floor, the theorem window, labels."""
    epochs = list(range(1, len(run.steps) + 1))
    exact, undefined = False, False
    for row, (component, layers) in enumerate(run.cosine.items()):
        for layer, values in enumerate(layers):
            layer_exact, layer_undefined = _layer_curve(axis, epochs, component, layer, values, row)
            exact, undefined = exact or layer_exact, undefined or layer_undefined
    if undefined:
        axis.plot([], [], "|", color="0.3", markersize=8, label="cosine undefined (weight still zero)")
    if exact:
        axis.axhline(EXACT_FLOOR, color="0.5", linewidth=0.8,
                     label=r"exact match, $1-\cos = 0$ (drawn at $10^{-17}$)")
    inside = [e for e, w in zip(epochs, run.within_window) if w]
    if inside:
        axis.axvspan(0.5, max(inside) + 0.5, color="0.92", label="theorem window")
    axis.set_xlabel("training epoch (one full-batch SGD step each)")
    axis.set_ylabel(r"$1 - \cos(\mathrm{trained}, \mathrm{leading\ term})$ (log scale)")
    lr = run.config.get("lr")
    axis.set_title(f"learning rate $\\eta = {lr:g}$, {run.config.get('layers')} layers, "
                   f"corpus {run.config.get('corpus')}", fontsize=9)
    _legend(axis, ncol=1)


def leading_cosines_figure(records, ax=None):
    r""":math:`1 - \cos` of every trained weight with its leading term, per layer, against the epoch
    (one panel per run, log axis).

    Layers that coincide stay visible: each layer has its own marker, and earlier layers are
    drawn wider underneath later ones.  An exact match (:math:`1 - \cos = 0`, e.g. :math:`W_O`
    after one step) is drawn on the floor line :data:`EXACT_FLOOR`, which is labelled; an epoch
    where the cosine is undefined (the weight is still zero) gets a tick at the top of the
    panel in its component's colour.
    """
    runs = list(records) if isinstance(records, (list, tuple)) else [records]
    figure, axes = new_figure(len(runs), ax, size=(6.4, 4.4))
    for axis, run in zip(axes, runs):
        _cosine_panel(axis, run)
    return figure


def window_edge_figure(record, ax=None):
    r"""Relative error :math:`\|W - W_{\rm theory}\|/\|W_{\rm theory}\|` (log-log, with the fitted
    slope) and :math:`1 - \cos` against :math:`s\eta`, across the theorem window's edge.

    ``record``: a :class:`~emergence.records.LeadingTermValidation`.  One colour per component
    (relative error: mean over layers, points and the least-squares line of
    :math:`\log` error against :math:`\log s\eta` whose slope the legend gives, theory 1;
    :math:`1-\cos`: minimum cosine over layers, dotted, right axis); the edge
    :math:`s\eta = k` is the dashed vertical line.
    """
    import numpy as np

    from emergence.validation.leading_terms.experiment import (
        COMPONENTS,
        EXACT_RELATIVE_ERROR,
        mean_over_layers,
        minimum_over,
    )

    data = record.to_dict()
    figure, (axis,) = new_figure(1, ax, size=(7.0, 4.5))
    s_eta = np.asarray(data["s_eta"], dtype=float)
    gap_axis = axis.twinx()
    for index, name in enumerate(COMPONENTS):
        colour = f"C{index}"
        errors = np.array(_values(mean_over_layers(data["relative_error"][name])))
        axis.loglog(s_eta, errors, "o", ms=3, color=colour)
        slope = data["relative_error_slope"][name]
        usable = np.isfinite(errors) & (errors > EXACT_RELATIVE_ERROR)
        if slope is not None and usable.sum() >= 2:
            intercept = np.mean(np.log(errors[usable]) - slope * np.log(s_eta[usable]))
            axis.loglog(s_eta, np.exp(intercept) * s_eta**slope, "-", color=colour,
                        label=f"${name}$ relative error, fitted slope {slope:.2f}")
        cosines = np.array(_values([minimum_over(list(epoch)) for epoch in zip(*data["cosine"][name])]))
        gap_axis.loglog(s_eta, np.maximum(1 - cosines, EXACT_FLOOR), ":", color=colour)
    axis.axvline(data["window_edge_s_eta"], color="black", linestyle="--",
                 label=f"window edge $s\\eta = {data['window_edge_s_eta']:.3g}$")
    axis.set_xlabel(r"$s\eta$ (steps $\times$ learning rate)")
    axis.set_ylabel(r"$\|W - W_{\rm theory}\| / \|W_{\rm theory}\|$ (points, fit)")
    gap_axis.set_ylabel(r"$1 - \cos$ (dotted, worst layer)")
    config = data["config"]
    axis.set_title(f"across the window's edge: corpus {config['corpus']}, $\\eta = {config['lr']:.3g}$, "
                   f"{config['layers']} layers", fontsize=9)
    _legend(axis)
    return figure


def checkpoint_figure(record, ax=None):
    """Per layer, the Gram metric (solid) and the weight metric (dashed) of the key-query and value maps
    against the checkpoint order; the baselines and verdicts are in the JSON.

    ``record``: a :class:`~emergence.records.CheckpointComparison` or its dictionary.
    """
    from pathlib import PurePath

    data = record if isinstance(record, dict) else record.to_dict()
    checkpoints = data["checkpoints"]
    figure, (axis,) = new_figure(1, ax, size=(7.0, 4.0))
    x = list(range(len(checkpoints)))
    for number in range(len(checkpoints[0]["layers"])):
        for name, metric, style in (("key_query", "gram", "-"), ("key_query", "weight", "--"), ("value", "gram", "-."),
                                    ("hidden_bigram", "gram", ":")):
            scores = [c["layers"][number][name][metric] for c in checkpoints]
            if all("value" in score for score in scores):
                axis.plot(x, [score["value"] for score in scores], style, marker="o",
                          label=f"layer {number}: {name.replace('_', '-')} ({metric})")
    axis.set_xticks(x, [PurePath(c["path"]).name for c in checkpoints], rotation=30)
    axis.set_xlabel("checkpoint (in the order given)")
    axis.set_ylabel("metric against the leading term")
    axis.set_title(f"checkpoints against leading terms (top {data['top_k']} tokens; baselines in the JSON)", fontsize=9)
    _legend(axis)
    return figure


def posterior_figure(report: dict, ax=None):
    r""":math:`a_G` against :math:`P`: replica-exchange posterior means (points whose R-hat exceeds
    1.05 hollow), the posterior-level theory (mode-weighted, and each mode) and the saddle (MAP).

    ``report``: the dictionary that ``emergence validate posterior`` writes as JSON.
    """
    measured, predicted, saddle = report["measured"], report.get("predicted"), report.get("saddle")
    figure, (axis,) = new_figure(1, ax, size=(6.5, 4.2))
    for flagged, face, label in ((False, "tab:green", r"measured, $\hat R \leq 1.05$"),
                                 (True, "none", r"measured, flagged ($\hat R > 1.05$)")):
        index = [i for i, f in enumerate(measured["flagged"]) if f == flagged]
        if index:
            axis.errorbar([measured["P"][i] for i in index], [measured["aG_mean"][i] for i in index],
                          yerr=[measured["aG_sem"][i] for i in index], fmt="o", mfc=face, color="tab:green",
                          capsize=3, label=label)
    if predicted is not None:
        axis.plot(predicted["P"], _values(predicted["aG"]), "-", color="black", label="posterior theory (mode-weighted)")
        for start, style in (("uniform", ":"), ("copy", "--")):
            if f"aG_{start}" in predicted:  # softmax: two modes; linear: one minimum
                axis.plot(predicted["P"], _values(predicted[f"aG_{start}"]), style, color="grey",
                          label=f"posterior theory, {start} mode")
    if saddle is not None:
        L = saddle["L"]
        aG = saddle.get("aG") or [None if cG is None else (cG * (L - 1) + 1) / L for cG in saddle["cG"]]
        axis.plot(saddle["P"], _values(aG), "-", color="tab:red", alpha=0.6, label="saddle (MAP)")
    _log_x(axis)
    axis.set_xlabel("$P$ (training sequences)")
    axis.set_ylabel("$a_G$ (mean attention on the previous token)")
    _legend(axis)
    return figure


def free_energy_figure(report: dict, ax=None):
    r"""Left: the measured profiles :math:`F(a_G)` (umbrella + MBAR, error bars) and the posterior theory's,
    one colour per :math:`P`.  Right: :math:`\Delta F = F_{\rm copy} - F_{\rm uniform}` against :math:`P`,
    measured (hollow where a point misses the diagnostics) and predicted, with the measured, posterior-theory
    and saddle (MAP) :math:`P^*`.

    ``report``: what ``emergence validate posterior --method umbrella`` writes as JSON.
    """
    import matplotlib
    import numpy as np

    measured, predicted, saddle = report["measured"], report["predicted"], report["saddle"]
    figure, (profile_axis, delta_axis) = new_figure(2, ax, size=(5.2, 4.0))
    colours = matplotlib.colormaps["viridis"](np.linspace(0, 0.9, len(measured["P"])))
    for colour, P, sampled, theory in zip(colours, measured["P"], measured["profiles"], predicted["profiles"]):
        F = np.array(_values(sampled["F"]), dtype=float)
        error = np.array(_values(sampled["F_error"]), dtype=float)
        profile_axis.errorbar(sampled["bins"], F, yerr=error, fmt="o", ms=3, color=colour, label=f"P = {P}")
        profile_axis.plot(theory["aG"], theory["F"], "-", color=colour, alpha=0.7)
    profile_axis.set_xlabel("$a_G$")
    profile_axis.set_ylabel("$F(a_G)$ (nats; points measured, lines theory)")
    profile_axis.set_ylim(-0.5, 15)
    _legend(profile_axis)
    for converged, face in ((True, "tab:green"), (False, "none")):
        index = [i for i, ok in enumerate(measured["converged"]) if ok == converged]
        if index:
            delta_axis.errorbar([measured["P"][i] for i in index], [measured["delta_F"][i] for i in index],
                                yerr=[measured["delta_F_error"][i] for i in index], fmt="o", mfc=face, color="tab:green",
                                capsize=3, label="measured" + ("" if converged else " (diagnostics not met)"))
    delta_axis.plot(measured["P"], predicted["delta_F"], "-", color="black", label="posterior theory")
    delta_axis.axhline(0.0, color="grey", lw=0.5)
    markers = [(measured["P_star"] and measured["P_star"]["value"], "tab:green", "measured $P^*$"),
               (predicted["P_star"], "black", "posterior theory $P^*$"), (saddle["P_star"], "tab:red", "saddle (MAP) $P^*$")]
    for value, colour, label in markers:
        if value:
            delta_axis.axvline(value, color=colour, ls="--", alpha=0.7, label=label)
    _log_x(delta_axis)
    delta_axis.set_xlabel("$P$ (training sequences)")
    delta_axis.set_ylabel(r"$\Delta F = F_{\rm copy} - F_{\rm uniform}$ (nats)")
    _legend(delta_axis)
    return figure


def posterior_study_figure(study: dict, ax=None):
    r"""Left: :math:`P^*(L)` of the sampled posterior (points, error bars; sizes without a converged bracket
    are not drawn), the posterior theory and the saddle (MAP), log-log.  Right: each divided by
    :math:`L\ln^2 L`, the saddle law's scale (a constant for a curve that keeps the law).

    ``study``: the ``study`` record of :func:`~emergence.validation.copy_task.posterior_study.run_posterior_study`.
    """
    rows = study["rows"]
    L = [row["L"] for row in rows]
    figure, (value_axis, ratio_axis) = new_figure(2, ax, size=(5.0, 4.0))
    sampled = [row for row in rows if row["sampled"] is not None]
    for axis, scale in ((value_axis, lambda n: 1.0), (ratio_axis, lambda n: 1.0 / (n * math.log(n) ** 2))):
        for key, colour, label in (("theory", "black", "posterior theory"), ("saddle", "tab:red", "saddle (MAP)")):
            axis.plot(L, [float("nan") if row[key] is None else row[key] * scale(row["L"]) for row in rows], "-o",
                      ms=3, color=colour, label=label)
        if sampled:
            axis.errorbar([row["L"] for row in sampled], [row["sampled"]["value"] * scale(row["L"]) for row in sampled],
                          yerr=[(row["sampled"]["error"] or 0.0) * scale(row["L"]) for row in sampled], fmt="s",
                          color="tab:green", capsize=3, label="sampled (umbrella + MBAR)")
        _log_x(axis)
        axis.set_xlabel("$L$")
    value_axis.set_yscale("log")
    value_axis.set_ylabel("$P^*$ (training sequences)")
    ratio_axis.set_ylabel(r"$P^* / (L \ln^2 L)$")
    _legend(ratio_axis)
    return figure


def scaling_ratios_figure(verdicts, ax=None):
    """Each claim's transition divided by its claimed law against the swept size (log axes), one
    panel per (claim, sweep), with the derived large-size form where one exists."""
    from emergence.numerics.copy_head.scaling_claims import CLAIMS

    verdicts = list(verdicts) if isinstance(verdicts, (list, tuple)) else [verdicts]
    panels = [(verdict, sweep) for verdict in verdicts for sweep in verdict.sweeps()]
    figure, axes = new_figure(len(panels), ax, size=(4.6, 3.8))
    for axis, (verdict, sweep) in zip(axes, panels):
        variable = sweep["variable"]
        law = math_label(verdict.law)
        axis.semilogx(sweep["sizes"], sweep["ratio"], "o-", label=f"$P$ / {law}")
        if sweep.get("reference_ratio"):
            axis.semilogx(sweep["reference_sizes"], sweep["reference_ratio"], "s--", mfc="none",
                          label="$P$ / derived large-size form")
        _log_x(axis)
        axis.set_xlabel(f"{SIZE_NAMES[variable]} (log scale)")
        axis.set_ylabel(f"transition $P$ / {law} (dimensionless)")
        claim = CLAIMS.get(verdict.claim)
        transition = TRANSITIONS.get(claim.transition, (claim.transition, ""))[0] if claim else verdict.claim
        fixed = {s["sweep"]: s for s in verdict.sizes}[variable]
        other = "V" if variable == "L" else "L"
        axis.set_title(f"{verdict.claim}: {transition}\nsweep over ${variable}$ at ${other} = {fixed[other]}$ "
                       f"({'holds' if verdict.holds else 'fails'})", fontsize=9)
        _legend(axis)
    return figure


def _signed_image(axis, array):
    """``array`` as an image on a colour scale centred on zero (red positive, blue negative)."""
    import numpy as np

    limit = float(np.max(np.abs(array))) or 1.0
    return axis.imshow(array, cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest")


def basis_figure(record, ax=None):
    r"""The bigram statistic :math:`\bar B` and the context statistic :math:`\bar\Phi` as images
    (token index on both axes)."""
    arrays = record.arrays()
    figure, axes = new_figure(2, ax, size=(4.6, 4.0))
    for axis, (symbol, title) in zip(axes, (("B", r"bigram $\bar B$"), ("Phi", r"context $\bar\Phi$"))):
        image = _signed_image(axis, arrays[symbol])
        axis.set_title(f"{title} ($V = {len(record.tokens)}$, $N = {record.N}$ windows)", fontsize=9)
        axis.set_xlabel("token index $k$")
        axis.set_ylabel("token index $j$")
        figure.colorbar(image, ax=axis, label="value (dimensionless)")
    return figure


def leading_weights_figure(record, ax=None):
    r"""The predicted output weight :math:`W_O` and first-layer value weight :math:`V^{(1)}` as images."""
    figure, axes = new_figure(2, ax, size=(4.6, 4.0))
    for axis, (name, title) in zip(axes, (("W_O", "$W_O$"), ("V_l", "$V^{(1)}$"))):
        array = record.weights[name]
        image = _signed_image(axis, array if name == "W_O" else array[0])
        axis.set_title(f"predicted {title} after $s = {record.steps}$ steps, $\\eta = {record.lr:g}$", fontsize=9)
        axis.set_xlabel("token index")
        axis.set_ylabel("token index")
        figure.colorbar(image, ax=axis, label="weight (dimensionless)")
    return figure


def _transition_points(entries: list, key: str) -> tuple[list[float], list[float]]:
    """``(rho, value)`` of the entries that have ``key``."""
    kept = [entry for entry in entries if entry.get(key) is not None]
    return [entry["rho"] for entry in kept], [entry[key] for entry in kept]


def _rho_theory(axis, theory: list, attention: str) -> None:
    """The theory's transitions against rho: softmax, the P* line and metastable window and the onset where the
    jump has ended; linear, the second-order point P1 and the copy crossover."""
    if attention == "linear":
        for key, style, label in (("crossover", "-", "theory copy crossover"), ("P1", ":", "theory $P_1$ (second order)")):
            rho, value = _transition_points(theory, key)
            axis.plot(rho, value, style, color="black", label=label)
        return
    rho, P_star = _transition_points(theory, "P_star")
    axis.plot(rho, P_star, "-", color="black", label="theory $P^*$ (first order)")
    windows = [entry for entry in theory if entry.get("spinodals")]
    if windows:
        axis.fill_between([e["rho"] for e in windows], [e["spinodals"][0] for e in windows],
                          [e["spinodals"][1] for e in windows], color="0.85", label=METASTABLE)
    rho, onset = _transition_points(theory, "onset")
    if onset:
        axis.plot(rho, onset, "--", color="black", label="theory onset (continuous)")


def _rho_adam(axis, adam: list) -> None:
    """Each measured Adam bracket as a bar at its rho (red: a corpus, blue: a persistence process), a cross on
    the bars of a record whose verdict fails."""
    labelled = set()
    for point in (entry for entry in adam if entry.get("bracket")):
        name = "corpus" if point["tokens"].startswith("corpus:") else "persistence"
        axis.plot([point["rho"]] * 2, point["bracket"], "-", color="tab:red" if name == "corpus" else "tab:blue", lw=3,
                  label=None if name in labelled else f"Adam bracket ({name})")
        labelled.add(name)
        if point.get("passes") is False:
            axis.plot([point["rho"]], [math.sqrt(point["bracket"][0] * point["bracket"][1])], "x", color="black", ms=8,
                      mew=1.5, label=None if "fails" in labelled else "verdict fails")
            labelled.add("fails")


def _rho_corpus(axis, corpus: dict, attention: str) -> None:
    """A measured process at its effective persistence: a star per theory transition."""
    name = corpus["token_statistics"].get("file", corpus["tokens"]).rsplit("/", 1)[-1]
    keys = ("P1", "crossover") if attention == "linear" else ("P_star",) if corpus.get("P_star") else ("onset",)
    names = {"P1": "$P_1$", "crossover": "crossover", "P_star": "$P^*$", "onset": "onset"}
    for n, key in enumerate(key for key in keys if corpus.get(key) is not None):
        axis.plot([corpus["rho_eff"]], [corpus[key]], "*", color="tab:red", ms=14,
                  label=f"theory, {name} ({', '.join(names[k] for k in keys)})" if n == 0 else None)


def rho_sweep_figure(record, ax=None):
    r"""The copy transition against the persistence :math:`\rho`, one panel per record (a record or a list of them,
    two columns): softmax, the theory's :math:`P^*` (line) and metastable window and its onset where the jump has
    ended (dashed); linear, the theory's second-order point :math:`P_1` (dotted) and copy crossover (line);
    measured Adam brackets (bars, a cross where the record's verdict fails), and a measured process at its
    effective persistence (star: theory; bar: Adam)."""
    records = record if isinstance(record, list) else [record]
    figure, axes = new_figure(len(records), ax, columns=min(2, len(records)), size=(6.2, 4.2) if len(records) == 1 else (7.6, 4.0))
    for axis, panel in zip(axes, records):
        _rho_theory(axis, panel.theory, panel.attention)
        _rho_adam(axis, panel.adam)
        if panel.corpus is not None:
            _rho_corpus(axis, panel.corpus, panel.attention)
        axis.set_yscale("log")
        axis.set_xlabel(r"persistence $\rho$ (corpus: effective $\rho_{\rm eff}$; dimensionless)")
        quantity = "$P_1$ and crossover" if panel.attention == "linear" else "$P^*$ or onset"
        axis.set_ylabel(f"{quantity} (training sequences, log scale)")
        axis.set_title(f"copy head, {panel.attention} attention, $L = {panel.L}$, $V = {panel.V}$", fontsize=9, loc="left")
        _legend(axis)
    return figure


def _record_field(mapping: dict, key: str, where: str):
    """``mapping[key]``; a one-line :class:`~emergence.base.errors.EmergenceError` naming ``where`` and ``key`` when absent."""
    from emergence.base.errors import EmergenceError

    if not isinstance(mapping, dict) or key not in mapping:
        raise EmergenceError(f"the P*(L) record has no {where}{key!r}")
    return mapping[key]


def _law_theory_curves(axis, record: dict, theory: list[dict], L: list[int]) -> None:
    """The P*(L) figure's theory curves: the posterior theory with the record's ``theory.trial`` and the saddle
    (solid), and where the record has ``theory_gauge`` the gauge-correct trial's posterior theory (dashed)."""
    trial = _record_field(record["theory"], "trial", "theory ")
    for key, colour, label in (("posterior_P_star", "black", f"posterior theory ({trial} trial)"),
                               ("saddle_P_star", "tab:red", "saddle (MAP)")):
        axis.plot(L, _values([_record_field(row, key, "theory row ") for row in theory]), "-o", ms=3, color=colour,
                  label=label)
    if "theory_gauge" in record:
        gauge = _record_field(record["theory_gauge"], "rows", "theory_gauge ")
        axis.plot([_record_field(row, "L", "theory_gauge row ") for row in gauge],
                  _values([_record_field(row, "posterior_P_star", "theory_gauge row ") for row in gauge]), "--",
                  color="0.45", lw=1, label="posterior theory (gauge-correct trial)")


def posterior_P_star_law_figure(record: dict, ax=None):
    r""":math:`P^*(L)`, log-log: the posterior theory's (its default trial, solid; the gauge-correct trial's dashed
    beside it where the record has it) and the saddle's (MAP) curves, the sampled posterior's converged
    brackets (vertical bars) with the reading inside each (marker), and :math:`L\ln^2 L` scaled to pass through the
    saddle at the largest :math:`L` (dotted; a reference, not a fit).

    ``record``: ``theory``, the JSON of ``scripts/posterior_P_star_law.py`` (``trial``, ``rows`` of ``L``,
    ``posterior_P_star``, ``saddle_P_star``; ``None`` where there is no jump), optionally ``theory_gauge`` (the same
    with ``--trial gauge``), and ``study``, the size study's rows
    (:func:`~emergence.validation.copy_task.posterior_study.study_row`: ``L`` and ``sampled`` {``value``,
    ``bracket`` ``[low, high]``}, ``None`` where no converged pair brackets the sign change, which draws
    nothing), each with its ``source``.  A missing field is a one-line
    :class:`~emergence.base.errors.EmergenceError` naming it.
    """
    theory = _record_field(_record_field(record, "theory", ""), "rows", "theory ")
    study = _record_field(_record_field(record, "study", ""), "rows", "study ")
    sampled = [(_record_field(row, "L", "study row "), _record_field(row, "sampled", "study row ")) for row in study]
    figure, axes = new_figure(1, ax, size=(6.2, 4.4))
    axis = axes[0]
    L = [_record_field(row, "L", "theory row ") for row in theory]
    _law_theory_curves(axis, record, theory, L)
    saddle = [(row["L"], row["saddle_P_star"]) for row in theory if row["saddle_P_star"] is not None]
    if saddle:
        largest, value = max(saddle)
        scale = value / (largest * math.log(largest) ** 2)
        axis.plot(L, [scale * n * math.log(n) ** 2 for n in L], ":", color="0.4",
                  label=rf"$L\,\ln^2 L$ through the saddle at $L = {largest}$")
    for n, (size, measured) in enumerate((size, measured) for size, measured in sampled if measured is not None):
        low, high = _record_field(measured, "bracket", "study row's sampled ")
        axis.plot([size, size], [low, high], "-", color="tab:green", lw=3, label="sampled: converged bracket" if n == 0 else None)
        axis.plot([size], [_record_field(measured, "value", "study row's sampled ")], "D", color="tab:green", mfc="white",
                  label="sampled: reading (root of $\\Delta F$)" if n == 0 else None)
    _log_x(axis)
    axis.set_yscale("log")
    axis.set_xlabel("sequence length $L$ (log scale)")
    axis.set_ylabel("$P^*$ (training sequences, log scale)")
    axis.set_title(f"copy head, softmax attention, $V = {record.get('V', '?')}$", fontsize=9, loc="left")
    _legend(axis)
    return figure
