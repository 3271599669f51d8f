r"""Model M with its bulk: the remaining norms of A and their entropy terms (linear attention).

For positional logits with an isotropic prior (variance :math:`s` per entry of A, cyclic
shift) split A orthogonally into

- the uniform direction :math:`J/L` (coordinate u = c1 + cG),
- the copy direction :math:`S - J/L` (coordinate cG, norm :math:`\sqrt{L-1}`),
- the row-sum part :math:`w\mathbf 1^T/\sqrt L` with :math:`w\perp\mathbf 1` (dimension L - 1,
  squared norm :math:`R_{\rm row}`),
- the bulk: everything else (dimension :math:`L^2 - L - 1`, squared norm :math:`R_{\rm bulk}`).

The row-sum part and the bulk are orthogonal to J and S, have zero trace against S and
(for the bulk) zero row sums, so the invariants are
:math:`q = u^2 + (L-1)c_G^2 + R_{\rm row} + R_{\rm bulk}`, :math:`m = u + (L-1)c_G`,
:math:`r = L u^2 + L R_{\rm row}`, :math:`n = L u`.  Integrating the directions at fixed norm
gives the entropy :math:`-(d/2 - 1)\ln R` for a d-dimensional part (radial measure
:math:`R^{d/2-1}dR`).  The action is then minimised (saddle point) over the norms.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.symbols import L, c1, cG, m, n, q, r

R_row, R_bulk = sp.symbols("R_row R_bulk", positive=True)
s_A = sp.Symbol("s", positive=True)
"""Prior variance of each entry of the linear attention matrix A (model M)."""

PART_DIMENSIONS = {"uniform": sp.Integer(1), "copy": sp.Integer(1), "row": L - 1, "bulk": L**2 - L - 1}


def dimension_check() -> sp.Expr:
    """Sum of the part dimensions minus L^2 (0: the parts span all L x L matrices)."""
    return sp.expand(sum(PART_DIMENSIONS.values()) - L**2)


@lru_cache(maxsize=None)
def linear_reduced_action_M(targets: str = "raw") -> sp.Expr:
    """S(c1, cG, R_row, R_bulk) of model M: isotropic prior, entropy of the row and bulk parts, data."""
    u = c1 + cG
    invariants = {
        q: u**2 + (L - 1) * cG**2 + R_row + R_bulk,
        m: u + (L - 1) * cG,
        r: L * u**2 + L * R_row,
        n: L * u,
    }
    prior = (u**2 + (L - 1) * cG**2 + R_row + R_bulk) / (2 * s_A)
    entropy = -(PART_DIMENSIONS["row"] / 2 - 1) * sp.log(R_row) - (PART_DIMENSIONS["bulk"] / 2 - 1) * sp.log(R_bulk)
    return prior + entropy + population_action("cyclic", targets).subs(invariants, simultaneous=True)
