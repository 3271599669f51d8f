r"""Order parameters of an attention matrix: uniform pooling, copy pattern, coverage.

Any attention matrix :math:`A \in \mathbb{R}^{L\times L}` is projected (Frobenius inner
product) onto the plane spanned by the all-ones matrix :math:`J = \mathbb{1}\mathbb{1}^\top`
and the cyclic shift :math:`S` (:math:`S_{\ell,\ell-1} = 1`, indices mod :math:`L`):

.. math::
    A = c_1 \frac{J}{L} + c_G S + R, \qquad R \perp \{J, S\},

    n_J = \frac{\mathbb{1}^\top A \mathbb{1}}{L}, \quad m = \operatorname{tr}(A^\top S), \quad
    c_G = \frac{m - n_J}{L - 1}, \quad c_1 = n_J - c_G .

For softmax attention the rows sum to one, so :math:`c_1 + c_G = 1`; then
:math:`a_G = m / L` is the mean attention on the previous token and :math:`a_1 = 1 - c_G`.
The coverage is the fraction of :math:`\|A\|_F^2` inside :math:`\operatorname{span}\{J, S\}`;
with the orthonormal basis :math:`J/L` and :math:`(S - J/L)/\sqrt{L-1}` it is

.. math::
    \text{coverage} = \frac{n_J^2 + (m - n_J)^2/(L-1)}{\|A\|_F^2}

(0 for :math:`A = 0`).  The copy fraction is the fraction of :math:`\|A\|_F^2` along the copy
pattern alone, :math:`\cos^2(A, S) = m^2 / (L\,\|A\|_F^2)` (:math:`\|S\|_F^2 = L`; 0 for :math:`A = 0`):
a functional order parameter, near 1 for a copy head and :math:`1/L` for uniform pooling.  Every quantity is computed from :math:`\hat A = A/s` with
:math:`s = \max_{\ell\ell'} |A_{\ell\ell'}|` and scaled back (:math:`n_J = s\,\hat n_J`,
:math:`m = s\,\hat m`; the coverage is scale-invariant), so squares neither underflow nor
overflow for any finite magnitude (:mod:`emergence.numerics.magnitude`).  Everything is batched over leading axes, ``(..., L, L) -> (...)``,
and uses only methods that NumPy, CuPy and torch arrays share (``sum``, ``diagonal``,
slicing), so a torch tensor stays on its device and keeps its autograd graph.  ``L >= 2``
is required (for ``L = 1``, :math:`J = S` and the split is undefined).

>>> import numpy as np
>>> order = copy_order_parameters(cyclic_shift(4))
>>> float(order.c1), float(order.cG), float(order.aG), float(order.coverage), float(order.copy_fraction)
(0.0, 1.0, 1.0, 1.0, 1.0)
>>> order = copy_order_parameters(np.full((4, 4), 0.25))
>>> float(order.c1), float(order.cG), float(order.a1), float(order.copy_fraction)
(1.0, 0.0, 1.0, 0.25)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy

from emergence.numerics.magnitude import safe_scale
from emergence.base.errors import InvalidSizeError


def cyclic_shift(L: int, dtype=float) -> numpy.ndarray:
    r"""The cyclic shift :math:`S` with :math:`S_{\ell,\ell-1} = 1` (row 0 reads position ``L-1``).

    :math:`(S X)_\ell = X_{\ell-1}`: applied to a sequence it yields the previous tokens.

    >>> cyclic_shift(3).astype(int).tolist()
    [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    """
    return numpy.roll(numpy.eye(L, dtype=dtype), -1, axis=1)


def open_shift(L: int, dtype=float) -> numpy.ndarray:
    r"""The open shift: :math:`S_{\ell,\ell-1} = 1` for :math:`\ell \ge 1`, row 0 empty.

    >>> open_shift(3).astype(int).tolist()
    [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    """
    return numpy.eye(L, k=-1, dtype=dtype)


@dataclass(frozen=True)
class CopyOrderParameters:
    """Order parameters of a batch of attention matrices; each field has shape ``A.shape[:-2]``."""

    c1: Any
    cG: Any
    n_J: Any
    m: Any
    aG: Any
    a1: Any
    coverage: Any
    copy_fraction: Any


def shift_overlap(A):
    r""":math:`m = \operatorname{tr}(A^\top S) = \sum_\ell A_{\ell,\ell-1}` (cyclic), batched."""
    L = A.shape[-1]
    return A.diagonal(-1, -2, -1).sum(-1) + A[..., 0, L - 1]


def copy_order_parameters(A) -> CopyOrderParameters:
    r"""The order parameters of attention matrices ``A`` of shape ``(..., L, L)``.

    Fails (``InvalidSizeError``) for non-square matrices or ``L < 2``.

    >>> import torch
    >>> A = torch.softmax(torch.randn(5, 6, 6), dim=-1)
    >>> order = copy_order_parameters(A)
    >>> bool(torch.allclose(order.c1 + order.cG, torch.ones(5), atol=1e-6))
    True
    """
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise InvalidSizeError(f"attention matrices must have shape (..., L, L), got {tuple(A.shape)}")
    L = A.shape[-1]
    if L < 2:
        raise InvalidSizeError("order parameters need L >= 2 (for L = 1 the shift equals J)")
    scale = safe_scale(A)
    unit = A / scale[..., None, None]
    unit_n_J = unit.sum(-1).sum(-1) / L
    unit_m = shift_overlap(unit)
    norm2 = (unit * unit).sum(-1).sum(-1)
    explained = unit_n_J * unit_n_J + (unit_m - unit_n_J) * (unit_m - unit_n_J) / (L - 1)
    coverage = explained / (norm2 + (norm2 == 0))
    copy_fraction = unit_m * unit_m / (L * (norm2 + (norm2 == 0)))
    unit_cG = (unit_m - unit_n_J) / (L - 1)
    n_J, m, cG, c1 = (scale * x for x in (unit_n_J, unit_m, unit_cG, unit_n_J - unit_cG))
    return CopyOrderParameters(c1=c1, cG=cG, n_J=n_J, m=m, aG=m / L, a1=1 - cG, coverage=coverage,
                                copy_fraction=copy_fraction)


def symmetric_part(A):
    r"""The projection :math:`c_1 J/L + c_G S` of ``A`` onto :math:`\operatorname{span}\{J, S\}` (NumPy)."""
    A = numpy.asarray(A)
    L = A.shape[-1]
    order = copy_order_parameters(A)
    return (
        numpy.asarray(order.c1)[..., None, None] * numpy.ones((L, L)) / L
        + numpy.asarray(order.cG)[..., None, None] * cyclic_shift(L)
    )
