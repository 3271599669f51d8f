r"""Umbrella windows placed from the measured profile: closer windows where neighbours do not overlap, stiffer
and closer ones where a window's chains split.

MBAR joins windows :math:`k` and :math:`k+1` through the draws both of them weight, measured by the
overlap :math:`O_{k,k+1}` of its overlap matrix (:class:`~emergence.validation.samplers.umbrella.FreeEnergyProfile`).
Where the profile is steep, the bias no longer holds a window near its centre and neighbours drift
apart; where a window's own distribution is narrow they never meet.  Where the profile bends down faster
than the bias bends up, :math:`F''(\xi) < -\kappa_k` on a barrier top, the window's own law
:math:`e^{-F(\xi) - \kappa_k(\xi - \xi_k)^2/2}` has two modes and its chains split between them
(rank :math:`\hat R` above the limit however long they run); a stiffer bias makes it one mode again.
After a pass, :func:`refine_windows` adds a window half-way between every pair with :math:`O_{k,k+1}` below the
target (with the stiffer of the two biases), makes every split window ``stiffen`` times stiffer and adds
windows half-way to both its neighbours (a stiffer window is narrower), and :func:`place_windows` repeats
the pass until every neighbour overlap reaches the target and no window splits, or stops at a cap on the
number of windows and says what is still short.

>>> refine_windows([0.1, 0.2, 0.4], 200.0, [0.3, 0.05], minimum=0.1)
([0.1, 0.2, 0.30000000000000004, 0.4], [200.0, 200.0, 200.0, 200.0])
>>> refine_windows([0.1, 0.2, 0.4], 200.0, [0.3, 0.3], minimum=0.1, split=[False, True, False], stiffen=4.0)
([0.1, 0.15000000000000002, 0.2, 0.30000000000000004, 0.4], [200.0, 800.0, 800.0, 800.0, 200.0])
>>> PlacementSettings(minimum=1.5)
Traceback (most recent call last):
...
ValueError: window placement needs 0 <= minimum overlap < 1, got 1.5
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PlacementSettings:
    """The neighbour overlap every pair must reach (``minimum``; 0: one pass), the cap on the number of windows, and
    the factor by which a window whose chains split is made stiffer (``stiffen``; 1: split windows are left as they
    are)."""

    minimum: float = 0.1
    maximum_windows: int = 16
    stiffen: float = 4.0

    def __post_init__(self):
        if not 0 <= self.minimum < 1:
            raise ValueError(f"window placement needs 0 <= minimum overlap < 1, got {self.minimum}")
        if self.maximum_windows < 2:
            raise ValueError(f"window placement needs maximum_windows >= 2, got {self.maximum_windows}")
        if not self.stiffen >= 1:
            raise ValueError(f"window placement needs stiffen >= 1, got {self.stiffen}")


def refine_windows(centres, kappa, neighbour_overlaps, minimum: float = 0.1, split=None,
                   stiffen: float = 4.0) -> tuple[list[float], list[float]]:
    r"""Centres and stiffnesses with every split window (``split (K,)``, true where a window's chains split)
    ``stiffen`` times stiffer, and a window added at :math:`(\xi_k + \xi_{k+1})/2`, stiffness
    :math:`\max(\kappa_k, \kappa_{k+1})` after the stiffening, for every neighbour overlap
    ``neighbour_overlaps[k] < minimum`` and beside every split window (``centres (K,)`` sorted, ``kappa`` a float
    or ``(K,)``, overlaps ``(K-1,)``)."""
    centres = [float(c) for c in centres]
    stiffness = [float(k) for k in np.broadcast_to(np.asarray(kappa, dtype=float), (len(centres),))]
    split = [False] * len(centres) if split is None else [bool(s) for s in split]
    if stiffen > 1:
        stiffness = [k * stiffen if s else k for k, s in zip(stiffness, split)]
    new_centres, new_stiffness = [centres[0]], [stiffness[0]]
    for k, overlap in enumerate(neighbour_overlaps):
        if overlap < minimum or stiffen > 1 and (split[k] or split[k + 1]):
            new_centres.append(0.5 * (centres[k] + centres[k + 1]))
            new_stiffness.append(max(stiffness[k], stiffness[k + 1]))
        new_centres.append(centres[k + 1])
        new_stiffness.append(stiffness[k + 1])
    return new_centres, new_stiffness


def place_windows(run_pass: Callable[[list[float], list[float]], tuple[Any, np.ndarray, np.ndarray]], centres, kappa,
                  settings: PlacementSettings = PlacementSettings()) -> tuple[Any, dict[str, Any]]:
    r"""Run ``run_pass(centres, kappa) -> (result, neighbour_overlaps (K-1,), split (K,))`` and refine
    (:func:`refine_windows`) until every neighbour overlap is at least ``settings.minimum`` and no window splits
    (``minimum`` 0 and ``stiffen`` 1: one pass).

    Returns the last pass's result and the placement record: ``passes``, the final ``centres`` and
    ``kappa``, ``met`` (every overlap reached the minimum and no window split, or split windows are not
    stiffened) and ``message`` (why not: the cap of ``settings.maximum_windows`` windows, the pairs still short
    and the windows still split, or ``None``).
    """
    minimum, maximum_windows, stiffen = settings.minimum, settings.maximum_windows, settings.stiffen
    centres = [float(c) for c in centres]
    stiffness = [float(k) for k in np.broadcast_to(np.asarray(kappa, dtype=float), (len(centres),))]
    passes = 0
    while True:
        result, overlaps, split = run_pass(centres, stiffness)
        passes += 1
        short = [k for k, overlap in enumerate(overlaps) if overlap < minimum]
        splitting = [k for k, s in enumerate(split) if s] if stiffen > 1 else []
        record = {"passes": passes, "centres": centres, "kappa": stiffness, "minimum": minimum, "stiffen": stiffen,
                  "met": not short and not splitting, "message": None}
        if record["met"]:
            return result, record
        refined = refine_windows(centres, stiffness, overlaps, minimum, split, stiffen)
        if len(refined[0]) > maximum_windows:
            pairs = ", ".join(f"{centres[k]:.3g}-{centres[k + 1]:.3g} ({overlaps[k]:.3f})" for k in short)
            split_windows = ", ".join(f"{centres[k]:.3g}" for k in splitting)
            record["message"] = (f"window cap {maximum_windows} reached with {len(centres)} windows"
                                 + (f": neighbour overlap below {minimum} between {pairs}" if short else "")
                                 + (f"{';' if short else ':'} chains split in the windows at {split_windows}"
                                    if splitting else ""))
            return result, record
        centres, stiffness = refined
