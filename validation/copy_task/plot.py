"""Plot measured order parameters and loss against P, with the theory's curves overlaid.

Adam sweeps also show :math:`a_G` of each start (open triangles): where they differ the
other start is metastable (hysteresis); the theory's metastable window (between its
spinodals) is shaded.
"""

from __future__ import annotations

import os


def _save(figure, path, title: str) -> None:
    """Title, layout and an atomic write in the format of ``path``'s suffix (png by default)."""
    import matplotlib.pyplot as plt

    from emergence.numerics.io import atomic_path

    figure.suptitle(title, fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    suffix = os.path.splitext(str(path))[1] or ".png"
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format=suffix.lstrip("."), dpi=120)
    plt.close(figure)


def plot_copy_head(path: str | os.PathLike, measured: dict, predicted: dict | None, title: str) -> None:
    """Two panels: order parameters (with error bars) and test loss per position versus P (log axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    P = measured["P"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = {"c1": "tab:blue", "cG": "tab:red", "aG": "tab:green"}
    labels = {"c1": "$c_1$ (uniform pooling)", "cG": "$c_G$ (copy)", "aG": "$a_G$ (attention on previous token)"}
    for key in ("c1", "cG", "aG"):
        left.errorbar(P, measured[f"{key}_mean"], yerr=measured[f"{key}_std"], fmt="o", capsize=3,
                      color=colours[key], label=f"measured {labels[key]}")
    for start, marker in (("uniform", "v"), ("copy", "^")):
        if f"aG_{start}_mean" in measured:
            left.plot(P, measured[f"aG_{start}_mean"], marker, mfc="none", color=colours["aG"],
                      label=f"$a_G$, Adam from the {start} start")
    right.errorbar(P, measured["loss_mean"], yerr=measured["loss_std"], fmt="o", capsize=3,
                   color="black", label="measured")
    if predicted is not None:
        for key in ("c1", "cG"):
            left.plot(predicted["P"], predicted[key], "-", color=colours[key], label=f"theory {labels[key]}")
        right.plot(predicted["P"], predicted["loss"], "-", color="black", label="theory")
        for name, value in predicted["transitions"].items():
            if isinstance(value, (int, float)):
                for axis in (left, right):
                    axis.axvline(value, color="grey", linestyle=":", linewidth=1)
        window = predicted["transitions"].get("spinodals")
        if window:
            for axis in (left, right):
                axis.axvspan(*window, color="orange", alpha=0.15,
                             label="theory: metastable window" if axis is left else None)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())
        axis.set_xlabel("P (training sequences)")
        axis.legend(fontsize=7)
    left.set_ylabel("order parameter (dimensionless)")
    right.set_ylabel("test loss per position\n(squared error summed over outputs)")
    _save(figure, path, title)


def plot_posterior(path: str | os.PathLike, measured: dict, predicted: dict | None, saddle: dict | None,
                   title: str) -> None:
    """a_G versus P: replica-exchange posterior means (R-hat-flagged points hollow), posterior theory, saddle (MAP)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    for flagged, face, label in ((False, "tab:green", "measured (R-hat <= 1.05)"), (True, "none", "measured, flagged (R-hat > 1.05)")):
        index = [i for i, f in enumerate(measured["flagged"]) if f == flagged]
        if index:
            axis.errorbar([measured["P"][i] for i in index], [measured["aG_mean"][i] for i in index],
                          yerr=[measured["aG_sem"][i] for i in index], fmt="o", mfc=face, color="tab:green",
                          capsize=3, label=label)
    if predicted is not None:
        axis.plot(predicted["P"], predicted["aG"], "-", color="black", label="posterior theory (mode-weighted)")
        for start, style in (("uniform", ":"), ("copy", "--")):
            axis.plot(predicted["P"], predicted[f"aG_{start}"], style, color="grey", label=f"posterior theory, {start} mode")
    if saddle is not None:
        L = saddle["L"]
        aG = [None if cG is None else (cG * (L - 1) + 1) / L for cG in saddle["cG"]]
        axis.plot(saddle["P"], aG, "-", color="tab:red", alpha=0.6, label="saddle (MAP)")
    axis.set_xscale("log")
    axis.set_xlabel("P (training sequences)")
    axis.set_ylabel("$a_G$ (mean attention on the previous token)")
    axis.legend(fontsize=7)
    _save(figure, path, title)
