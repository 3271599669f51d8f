"""The demo's figures, drawn only from the JSON-ready data stored in ``results.json``.

Every figure of the report is a *plot record* ``{"file", "kind", "data"}`` inside its
section's ``data["plots"]``.  :func:`draw_plots` draws the records of one section (the demo
calls it right after a step has computed its data) and :func:`regenerate_figures` draws every
record of a finished ``results.json`` again, so the stored numbers are complete by
construction.  Every axis is labelled with its quantity and unit.

>>> sorted(FIGURE_KINDS)
['copy_task', 'leading_cosines', 'phase_diagram', 'scaling_ratios']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from emergence.numerics.io import atomic_path  # noqa: E402

P_AXIS = "training sequences P (log scale)"
ORDER_AXIS = "order parameter (dimensionless)"
LOSS_AXIS = "test loss (squared error per position)"

_TRANSITION_STYLES = {
    "P1": ("second-order point $P_1$", ":"),
    "crossover": ("copy-mode onset", "--"),
    "crossover_literal": ("$c_G = c_1$", "-."),
    "P_star": ("coexistence point $P^*$", "-"),
}


def _values(values: list) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def _mark_transitions(axes, transitions: dict, label_axis) -> None:
    for key, (label, style) in _TRANSITION_STYLES.items():
        value = transitions.get(key)
        if isinstance(value, (int, float)):
            for axis in axes:
                axis.axvline(value, color="grey", linestyle=style, label=label if axis is label_axis else None)
    if transitions.get("spinodals"):
        low, high = transitions["spinodals"]
        for axis in axes:
            axis.axvspan(low, high, color="orange", alpha=0.15, label="metastable window" if axis is label_axis else None)


def phase_diagram_figure(data: dict, path: Path) -> None:
    """Order parameters (top) and predicted loss (bottom) of the reduced action's global minimum versus P."""
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6), constrained_layout=True)
    top.semilogx(data["P"], _values(data["c1"]), label="$c_1$ (uniform pooling)")
    top.semilogx(data["P"], _values(data["cG"]), label="$c_G$ (copy)")
    bottom.semilogx(data["P"], _values(data["loss"]), color="black", label="predicted test loss")
    _mark_transitions((top, bottom), data["transitions"], top)
    top.set_ylabel(ORDER_AXIS)
    bottom.set_ylabel(LOSS_AXIS)
    bottom.set_xlabel(P_AXIS)
    top.legend(fontsize="small")
    top.set_title(f"{data['attention']} attention, L={data['L']}, V={data['V']} (reconstructed model T)")
    _save(figure, path)


def copy_task_figure(data: dict, path: Path) -> None:
    """Measured order parameters and loss (Adam MAP, SGLD posterior mean) with the theory's curves."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    predicted = data["predicted"]
    colours = {"c1": "tab:blue", "cG": "tab:red"}
    names = {"c1": "$c_1$", "cG": "$c_G$"}
    for key in ("c1", "cG"):
        left.plot(predicted["P"], _values(predicted[key]), "-", color=colours[key], label=f"theory {names[key]}")
    right.plot(predicted["P"], _values(predicted["loss"]), "-", color="black", label="theory (population)")
    markers = {"adam": ("o", "Adam MAP"), "sgld": ("s", "SGLD mean")}
    for optimizer, measured in data["measured"].items():
        marker, label = markers[optimizer]
        for key in ("c1", "cG"):
            left.errorbar(measured["P"], measured[f"{key}_mean"], yerr=measured[f"{key}_std"], fmt=marker,
                          capsize=3, color=colours[key], mfc="none" if optimizer == "sgld" else None,
                          label=f"{label} {names[key]}")
        right.errorbar(measured["P"], measured["loss_mean"], yerr=measured["loss_std"],
                       fmt=marker, capsize=3, color="black", mfc="none" if optimizer == "sgld" else None, label=label)
    _mark_transitions((left, right), predicted["transitions"], left)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xlabel(P_AXIS)
        axis.legend(fontsize=7)
    left.set_ylabel(ORDER_AXIS)
    right.set_ylabel("held-out loss (squared error per position)")
    figure.suptitle(f"copy task, {data['attention']} attention, L={data['L']}, V={data['V']}: "
                    "trained models vs reconstructed theory", fontsize=10)
    _save(figure, path)


def leading_cosines_figure(data: dict, path: Path) -> None:
    """1 - Frobenius cosine of every trained weight with its leading term, per layer, against the epoch.

    Plotted as a gap on a log axis so that 1e-10 (inside the window) and 0.5 (far outside) both show;
    an exact 1 (W_O after one step) is left out.
    """
    runs = data["runs"]
    figure, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4.2), squeeze=False, constrained_layout=True)
    styles = {"W_O": "-", "V": "--", "W": "-.", "P": ":"}
    for axis, run in zip(axes[0], runs):
        epochs = list(range(1, len(run["steps"]) + 1))
        for component, layers in run["cosine"].items():
            for layer, values in enumerate(layers):
                name = component if component == "W_O" else f"{component}$^{{({layer + 1})}}$"
                gaps = [1 - v if v == v and v < 1 else float("nan") for v in _values(values)]
                axis.semilogy(epochs, gaps, styles.get(component, "-"), marker=".", label=name)
        inside = [e for e, w in zip(epochs, run["within_window"]) if w]
        if inside:
            axis.axvspan(0.5, max(inside) + 0.5, color="0.92", label="theorem window")
        axis.set_xlabel("training epoch (one full-batch SGD step each)")
        axis.set_ylabel("1 − cosine with leading term (dimensionless, log scale)")
        axis.set_title(f"learning rate {run['lr']:g}, {run['layers']} layers", fontsize=9)
        axis.legend(fontsize=7, ncol=2)
    _save(figure, path)


def scaling_ratios_figure(data: dict, path: Path) -> None:
    """Each claim's transition divided by its claimed law, against the swept size (log axes)."""
    claims = data["claims"]
    panels = [(claim, sweep) for claim in claims for sweep in claim["sweeps"]]
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False, constrained_layout=True)
    for axis, (claim, sweep) in zip(axes[0], panels):
        axis.semilogx(sweep["sizes"], sweep["ratio"], "o-", label="measured / law")
        if sweep.get("reference_ratio"):
            axis.semilogx(sweep["reference_sizes"], sweep["reference_ratio"], "s--", mfc="none",
                        label="measured / derived form")
        axis.set_xlabel(f"{sweep['variable']} ({'sequence length' if sweep['variable'] == 'L' else 'vocabulary size'}, "
                        "log scale)")
        axis.set_ylabel(f"transition P / {claim['law']} (dimensionless)")
        axis.set_title(f"{claim['claim']}", fontsize=9)
        axis.legend(fontsize=7)
    _save(figure, path)


FIGURE_KINDS: dict[str, Callable[[dict, Path], None]] = {
    "phase_diagram": phase_diagram_figure,
    "copy_task": copy_task_figure,
    "leading_cosines": leading_cosines_figure,
    "scaling_ratios": scaling_ratios_figure,
}


def _save(figure, path: Path) -> None:
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)


def plot_record(file: str, kind: str, data: dict) -> dict[str, Any]:
    """A plot record; ``data`` is made JSON-ready (as it will read back from ``results.json``)."""
    from emergence.numerics.io import to_json_text

    if kind not in FIGURE_KINDS:
        raise ValueError(f"unknown figure kind {kind!r}")
    return {"file": file, "kind": kind, "data": json.loads(to_json_text(data))}


def draw_plots(plots: list[dict], out: Path) -> list[Path]:
    """Draw every plot record under ``out``; return the written paths."""
    written = []
    for plot in plots:
        target = Path(out) / plot["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        FIGURE_KINDS[plot["kind"]](plot["data"], target)
        written.append(target)
    return written


def regenerate_figures(results: str | Path, out: str | Path | None = None) -> list[Path]:
    """Redraw every figure of a demo's ``results.json`` (into ``out``, default: beside the file)."""
    results = Path(results)
    document = json.loads(results.read_text(encoding="utf-8"))
    out = Path(out) if out is not None else results.parent
    written = []
    for section in document["sections"].values():
        written += draw_plots(section["data"].get("plots", []), out)
    return written
