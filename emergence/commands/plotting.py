"""Figures of the command line (matplotlib, Agg backend; imported only by commands that plot)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

_MARKERS = {
    "P1": ("second-order $P_1$", ":"),
    "crossover": ("copy onset", "--"),
    "crossover_literal": ("$c_G = c_1$", "-."),
    "P_star": ("coexistence $P^*$", "-"),
}


def plot_phase_diagram(diagram, path, format: str = "png") -> None:
    """Order parameters and predicted loss against log P, with the transitions marked."""
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6), constrained_layout=True)
    top.semilogx(diagram.P, diagram.c1, label="$c_1$ (uniform pooling)")
    top.semilogx(diagram.P, diagram.cG, label="$c_G$ (copy)")
    top.set_ylabel("order parameter (dimensionless)")
    bottom.semilogx(diagram.P, diagram.loss, color="black", label="predicted test loss")
    bottom.set_ylabel("test loss (squared error per position)")
    bottom.set_xlabel("P (number of training sequences)")
    transitions = diagram.transitions
    for key, (label, style) in _MARKERS.items():
        if transitions.get(key) is not None:
            for axis in (top, bottom):
                axis.axvline(transitions[key], color="grey", linestyle=style, label=label if axis is top else None)
    if transitions.get("spinodals"):
        low, high = transitions["spinodals"]
        for axis in (top, bottom):
            axis.axvspan(low, high, color="orange", alpha=0.15, label="metastable window" if axis is top else None)
    top.legend(fontsize="small")
    top.set_title(f"{diagram.attention} attention, L={diagram.L:g}, V={diagram.V:g} (reconstructed model)")
    figure.savefig(path, format=format)
    plt.close(figure)
