r"""The copy head's readout-marginal action (step 1 of the derivation): the readout weights integrated out.

With the data moments :math:`C = \sum \Phi^T\Phi`, :math:`B = \sum \Phi^T Y`, :math:`D = \sum Y^T Y` (V x V each, summed
over the P training sequences), inverse temperature :math:`\beta` and prior variance :math:`\lambda` of the readout,

.. math:: S = \tfrac\beta2\operatorname{tr}D - \tfrac{\beta^2\lambda}2\operatorname{tr}\big(B^T(I+\beta\lambda C)^{-1}B\big)
          + \tfrac V2\ln\det(I+\beta\lambda C).

>>> import numpy as np
>>> float(readout_action(np.zeros((2, 2)), np.zeros((2, 2)), np.eye(2), 1.0, 1.0))
1.0
"""

from __future__ import annotations

import numpy as np


def readout_action(C, B, D, beta: float, lam: float) -> np.ndarray:
    r""":math:`\tfrac\beta2\operatorname{tr}D - \tfrac{\beta^2\lambda}2\operatorname{tr}(B^T(I+\beta\lambda C)^{-1}B)
    + \tfrac V2\ln\det(I+\beta\lambda C)` (step 1), batched over leading axes."""
    V = C.shape[-1]
    K = np.eye(V) + beta * lam * C
    sign, logdet = np.linalg.slogdet(K)
    solved = np.linalg.solve(K, B)
    fit = np.einsum("...uv,...uv->...", B, solved)
    return beta / 2 * np.trace(D, axis1=-2, axis2=-1) - beta**2 * lam / 2 * fit + V / 2 * np.where(sign > 0, logdet, np.nan)
