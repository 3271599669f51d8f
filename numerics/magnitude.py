r"""Scale-free arithmetic: divide by the largest magnitude before squaring.

A sum of squares :math:`\sum_i x_i^2` underflows to 0 for :math:`|x_i| \lesssim 10^{-154}` and
overflows for :math:`|x_i| \gtrsim 10^{154}` in float64, although every ratio built from it
(a cosine, a coverage, a projection fraction) is scale-invariant.  Dividing by
:math:`s = \max_i |x_i|` first puts the largest entry at magnitude 1, so the squares of the
entries that matter can neither underflow nor overflow:

.. math::
    \frac{\langle x, y\rangle}{\|x\|\,\|y\|}
    = \frac{\langle x/s_x,\, y/s_y\rangle}{\|x/s_x\|\,\|y/s_y\|} .

Works on NumPy, CuPy and torch arrays (a torch tensor keeps its device and autograd graph).

>>> import numpy as np
>>> largest_magnitude(np.array([[1e-200, -3e-200], [2e-200, 0.0]])).item()
3e-200
>>> round(float(cosine(np.full(4, 1e-200), np.full(4, 7e250))), 12)
1.0
"""

from __future__ import annotations


def largest_magnitude(x, axes: int = 2):
    r""":math:`\max |x|` over the trailing ``axes`` axes, shape ``x.shape[:-axes]``; 0 for an all-zero block.

    >>> import torch
    >>> largest_magnitude(torch.tensor([[[1.0, -4.0], [2.0, 0.5]]])).tolist()
    [4.0]
    """
    flat = abs(x).reshape(*x.shape[: x.ndim - axes], -1)
    return flat.amax(-1) if hasattr(flat, "amax") else flat.max(-1)


def safe_scale(x, axes: int = 2):
    """:func:`largest_magnitude` with 0 replaced by 1, a divisor that is never zero."""
    scale = largest_magnitude(x, axes)
    return scale + (scale == 0)


def cosine(x, y):
    r"""Cosine :math:`\langle x, y\rangle / (\|x\|\|y\|)` of the flattened arrays; ``None`` when either is zero.

    Exact to rounding for any finite magnitudes (normalised before squaring).

    >>> import numpy as np
    >>> cosine(np.array([1e-300, 0.0]), np.array([1e300, 1e300])) == cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0]))
    True
    >>> cosine(np.zeros(3), np.ones(3)) is None
    True
    """
    x = x.reshape(-1)
    y = y.reshape(-1)
    x_scale, y_scale = largest_magnitude(x, 1), largest_magnitude(y, 1)
    if x_scale == 0 or y_scale == 0:
        return None
    x, y = x / x_scale, y / y_scale
    return float((x * y).sum() / ((x * x).sum() * (y * y).sum()) ** 0.5)
