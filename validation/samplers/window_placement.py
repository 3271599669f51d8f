r"""Umbrella windows placed from the measured profile: closer windows where neighbours do not overlap.

MBAR joins windows :math:`k` and :math:`k+1` through the draws both of them weight, measured by the
overlap :math:`O_{k,k+1}` of its overlap matrix (:class:`~emergence.validation.samplers.umbrella.FreeEnergyProfile`).
Where the profile is steep, the bias no longer holds a window near its centre and neighbours drift
apart; where a window's own distribution is narrow they never meet.  After a pass,
:func:`refine_windows` adds a window half-way between every pair with :math:`O_{k,k+1}` below the target
(with the stiffer of the two biases), and :func:`place_windows` repeats the pass until every neighbour
overlap reaches the target, or stops at a cap on the number of windows and says where the overlap is
still short.

>>> refine_windows([0.1, 0.2, 0.4], 200.0, [0.3, 0.05], minimum=0.1)
([0.1, 0.2, 0.30000000000000004, 0.4], [200.0, 200.0, 200.0, 200.0])
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
    """The neighbour overlap every pair must reach (``minimum``; 0: one pass) and the cap on the number of windows."""

    minimum: float = 0.1
    maximum_windows: int = 16

    def __post_init__(self):
        if not 0 <= self.minimum < 1:
            raise ValueError(f"window placement needs 0 <= minimum overlap < 1, got {self.minimum}")
        if self.maximum_windows < 2:
            raise ValueError(f"window placement needs maximum_windows >= 2, got {self.maximum_windows}")


def refine_windows(centres, kappa, neighbour_overlaps, minimum: float = 0.1) -> tuple[list[float], list[float]]:
    r"""Centres and stiffnesses with a window added at :math:`(\xi_k + \xi_{k+1})/2`, stiffness
    :math:`\max(\kappa_k, \kappa_{k+1})`, for every neighbour overlap ``neighbour_overlaps[k] < minimum``
    (``centres (K,)`` sorted, ``kappa`` a float or ``(K,)``, overlaps ``(K-1,)``)."""
    centres = [float(c) for c in centres]
    stiffness = [float(k) for k in np.broadcast_to(np.asarray(kappa, dtype=float), (len(centres),))]
    new_centres, new_stiffness = [centres[0]], [stiffness[0]]
    for k, overlap in enumerate(neighbour_overlaps):
        if overlap < minimum:
            new_centres.append(0.5 * (centres[k] + centres[k + 1]))
            new_stiffness.append(max(stiffness[k], stiffness[k + 1]))
        new_centres.append(centres[k + 1])
        new_stiffness.append(stiffness[k + 1])
    return new_centres, new_stiffness


def place_windows(run_pass: Callable[[list[float], list[float]], tuple[Any, np.ndarray]], centres, kappa,
                  settings: PlacementSettings = PlacementSettings()) -> tuple[Any, dict[str, Any]]:
    r"""Run ``run_pass(centres, kappa) -> (result, neighbour_overlaps (K-1,))`` and refine until every
    neighbour overlap is at least ``settings.minimum`` (0: one pass).

    Returns the last pass's result and the placement record: ``passes``, the final ``centres`` and
    ``kappa``, ``met`` (every overlap reached the minimum) and ``message`` (why not: the cap of
    ``settings.maximum_windows`` windows and the pairs still short, or ``None``).
    """
    minimum, maximum_windows = settings.minimum, settings.maximum_windows
    centres = [float(c) for c in centres]
    stiffness = [float(k) for k in np.broadcast_to(np.asarray(kappa, dtype=float), (len(centres),))]
    passes = 0
    while True:
        result, overlaps = run_pass(centres, stiffness)
        passes += 1
        short = [k for k, overlap in enumerate(overlaps) if overlap < minimum]
        record = {"passes": passes, "centres": centres, "kappa": stiffness, "minimum": minimum, "met": not short,
                  "message": None}
        if not short:
            return result, record
        if len(centres) + len(short) > maximum_windows:
            pairs = ", ".join(f"{centres[k]:.3g}-{centres[k + 1]:.3g} ({overlaps[k]:.3f})" for k in short)
            record["message"] = (f"window cap {maximum_windows} reached with {len(centres)} windows: neighbour "
                                 f"overlap below {minimum} between {pairs}")
            return result, record
        centres, stiffness = refine_windows(centres, stiffness, overlaps, minimum)
