r"""Flat directions of softmax model T: the changes of :math:`W_{QK}` that leave every attention row unchanged.

Row i of a sequence attends with :math:`\operatorname{softmax}_j G_{ij}`,
:math:`G_{ij} = z_i^T W_{QK} z_j`, :math:`z = (x; e) \in \mathbb R^{V+L}` (one-hot token and
one-hot position).  A change :math:`\delta W` leaves every row of every sequence unchanged iff
:math:`z_i^T\,\delta W\,(z_j - z_k) = 0` for every query i and keys j, k (a constant per row is the
softmax gauge).  With :math:`\langle \delta W, ab^T\rangle = a^T\delta W b`, the directions the data
can see span :math:`\mathcal Q \otimes \mathcal D`, :math:`\mathcal Q = \operatorname{span}\{z_i\}`
(queries), :math:`\mathcal D = \operatorname{span}\{z_j - z_k\}` (key differences); the flat subspace
:math:`\mathcal K` is its orthogonal complement.  The data term is constant along :math:`\mathcal K`,
so under the isotropic prior the posterior is the prior there, exactly.

**Invariant decomposition.**  The second moments of the embeddings commute with token and position
permutations, so they act as one scalar on :math:`\Pi^\perp_V = I_V - J_V/V` (multiplicity V - 1),
one on :math:`\Pi^\perp_L` (L - 1) and a 2 x 2 matrix on :math:`(\mathbf 1_V/\sqrt V, \mathbf 1_L/\sqrt L)`
(:class:`EmbeddingOperator`).  :math:`\dim\mathcal Q` is the rank of
:math:`\mathbb E[zz^T]` over uniform (token, position); :math:`\mathcal D` is the range of the
centred second moment :math:`\mathbb E[zz^T] - \mathbb E z\,\mathbb E z^T` (the direction space of
the affine hull of the keys; two keys of one sequence have different positions, and
:math:`(e_a - e_b; e_j - e_k) - (0; e_j - e_k)` gives the token differences, so for L >= 2 the
same-sequence differences span it too).  Both ranks come out of SymPy:
:math:`\dim\mathcal Q = V + L - 1` (token one-hot and position one-hot both sum to one, so every
query is orthogonal to :math:`(\mathbf 1_V; -\mathbf 1_L)`) and
:math:`\mathcal D = \Pi^\perp_V \oplus \Pi^\perp_L`, of dimension V + L - 2.

**Split by the trial's variance ratio.**  The Gaussian product trial of step 7 gives an entry the
variance ratio :math:`t_u` in the key-token columns and :math:`t_v` in the key-position columns; the
key covariance is block diagonal between the two (checked), so the informative directions of ratio
:math:`t_u` are :math:`\mathcal Q \otimes \Pi^\perp_V` and those of ratio :math:`t_v` are
:math:`\mathcal Q \otimes \Pi^\perp_L` (:func:`flat_directions`):

.. math::
    n^{\rm inf}_u = (V + L - 1)(V - 1), \quad n^{\rm inf}_v = (V + L - 1)(L - 1), \quad
    n^{\rm flat}_u = 2V + L - 1, \quad n^{\rm flat}_v = V + 2L - 1,

3(V + L) - 2 flat directions in all: 2(V + L) change a row by a constant (the softmax gauge:
:math:`a\,(\mathbf 1_V; 0)^T` and :math:`a\,(0; \mathbf 1_L)^T` for any a), V + L leave every logit
unchanged (:math:`(\mathbf 1_V; -\mathbf 1_L)\,d^T` for any d), and 2 are both.

>>> counts = flat_directions()
>>> counts["flat_total"]
3*L + 3*V - 2
>>> counts["key_token"]["informative"], counts["key_position"]["informative"]
((V - 1)*(L + V - 1), (L - 1)*(L + V - 1))
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.symbols import L, V


@dataclass(frozen=True)
class EmbeddingOperator:
    r"""A symmetric operator on :math:`\mathbb R^{V+L}` commuting with token and position permutations.

    ``token`` on :math:`\Pi^\perp_V` (multiplicity V - 1), ``position`` on :math:`\Pi^\perp_L`
    (multiplicity L - 1), ``ones`` (2 x 2) on the unit vectors :math:`(\mathbf 1_V/\sqrt V; 0)`,
    :math:`(0; \mathbf 1_L/\sqrt L)`.
    """

    token: sp.Expr
    position: sp.Expr
    ones: sp.Matrix

    def __sub__(self, other: "EmbeddingOperator") -> "EmbeddingOperator":
        return EmbeddingOperator(sp.simplify(self.token - other.token), sp.simplify(self.position - other.position),
                                 sp.simplify(self.ones - other.ones))

    def ones_rank(self) -> int:
        return self.ones.applyfunc(sp.simplify).rank(simplify=True)

    def rank(self) -> sp.Expr:
        """Multiplicity-weighted count of the nonzero eigenvalues (V, L >= 2)."""
        return (_nonzero(self.token) * (V - 1) + _nonzero(self.position) * (L - 1) + self.ones_rank())

    def block_diagonal(self) -> bool:
        """Whether the operator maps token coordinates to token coordinates (commutes with the token projector)."""
        return sp.simplify(self.ones[0, 1]) == 0 and sp.simplify(self.ones[1, 0]) == 0

    def rank_in(self, coordinates: str) -> sp.Expr:
        """Rank on the token (``"key_token"``) or position (``"key_position"``) coordinates (block diagonal only)."""
        if not self.block_diagonal():
            raise ArithmeticError("the operator mixes token and position coordinates; no split by column type")
        if coordinates == "key_token":
            return _nonzero(self.token) * (V - 1) + _nonzero(self.ones[0, 0])
        return _nonzero(self.position) * (L - 1) + _nonzero(self.ones[1, 1])


def _nonzero(value: sp.Expr) -> int:
    value = sp.simplify(value)
    if value.is_zero:
        return 0
    if value.is_nonzero:
        return 1
    raise ArithmeticError(f"cannot decide whether {value} vanishes")


@lru_cache(maxsize=None)
def embedding_moments() -> dict[str, EmbeddingOperator]:
    r""":math:`\mathbb E[zz^T]` (``query``) and the centred :math:`\mathbb E[zz^T] - \mathbb Ez\,\mathbb Ez^T` (``key``).

    Token a and position p uniform and independent: :math:`\mathbb E[e_ae_a^T] = I_V/V`,
    :math:`\mathbb E[e_pe_p^T] = I_L/L`, :math:`\mathbb E[e_ae_p^T] = \mathbf 1_V\mathbf 1_L^T/(VL)`,
    :math:`\mathbb E z = (\mathbf 1_V/V; \mathbf 1_L/L)`; in the unit ones-vectors
    :math:`\mathbf 1_V = \sqrt V\,n_V`.
    """
    second = EmbeddingOperator(1 / V, 1 / L, sp.Matrix([[1 / V, 1 / sp.sqrt(V * L)], [1 / sp.sqrt(V * L), 1 / L]]))
    mean = sp.Matrix([sp.sqrt(V) / V, sp.sqrt(L) / L])  # E z in (n_V, n_L)
    centred = second - EmbeddingOperator(sp.Integer(0), sp.Integer(0), mean * mean.T)
    return {"query": second, "key": centred}


@lru_cache(maxsize=None)
def flat_directions() -> dict:
    r"""Counts of informative and flat directions of :math:`W_{QK}` per key-column type (see the module docstring).

    Returns ``query_rank``, ``key_difference_rank``, per type (``key_token``, ``key_position``)
    ``entries`` (entries of that column type), ``informative`` (:math:`\dim\mathcal Q \times` the key
    rank in those columns) and ``flat`` (the rest), and ``flat_total``; ``softmax_gauge`` and
    ``logit_null`` (the two families of the module docstring) and their ``overlap``, whose sum
    less the overlap must equal ``flat_total`` (checked).
    """
    moments = embedding_moments()
    query_rank = sp.expand(moments["query"].rank())
    key = moments["key"]
    out: dict = {"query_rank": query_rank, "key_difference_rank": sp.expand(key.rank())}
    columns = {"key_token": V, "key_position": L}
    for kind, width in columns.items():
        entries = (V + L) * width
        informative = sp.factor(query_rank * key.rank_in(kind))
        out[kind] = {"entries": sp.expand(entries), "informative": informative,
                     "flat": sp.expand(entries - informative)}
    out["flat_total"] = sp.expand(out["key_token"]["flat"] + out["key_position"]["flat"])
    size = V + L
    # row constants: any query vector a times a key vector constant on every key (a 2-dim key space)
    out["softmax_gauge"] = sp.expand(size * (size - out["key_difference_rank"]))
    # logit null: a query vector orthogonal to every query, times any key vector
    out["logit_null"] = sp.expand((size - query_rank) * size)
    out["overlap"] = sp.expand((size - query_rank) * (size - out["key_difference_rank"]))
    if sp.expand(out["softmax_gauge"] + out["logit_null"] - out["overlap"] - out["flat_total"]) != 0:
        raise ArithmeticError("the two flat families do not add up to the flat subspace")
    return out


__all__ = ["EmbeddingOperator", "embedding_moments", "flat_directions"]
