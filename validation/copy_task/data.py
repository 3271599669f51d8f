r"""Copy-task data: i.i.d. uniform tokens and previous-token targets, batched over runs.

Run :math:`r` draws :math:`P_r` sequences of :math:`L` tokens uniformly from :math:`V`
with its own seed; as one-hot rows :math:`X^\mu \in \{0,1\}^{L\times V}` the targets are
:math:`Y^\mu = S X^\mu` with the cyclic shift (:math:`y_0 = x_{L-1}`) or the open shift
(:math:`y_0 = 0`).  Centred targets subtract the token mean :math:`1/V` from every row
that has a target.

Runs with different :math:`P_r` share one ragged batch (no padding): the sequences of all
runs are concatenated, ``tokens (N, L)``, ``targets (N, L, V)``, and ``run (N,)`` names the
run of each sequence, :math:`N = \sum_r P_r`.  For positional-logit models the data enter
only through the sufficient statistics (:meth:`CopyTaskBatch.statistics`)

.. math::
    K_r[j,u,k,w] = \sum_{\mu\in r} X^\mu_{ju}X^\mu_{kw}, \quad
    Q_r[j,u,i,v] = \sum_{\mu\in r} X^\mu_{ju}Y^\mu_{iv}, \quad
    D_r = \sum_{\mu\in r}\|Y^\mu\|_F^2 .

>>> batch = copy_task_batch([3, 5], L=4, V=2, seeds=[0, 1])
>>> tuple(batch.tokens.shape), batch.counts.tolist()
((8, 4), [3.0, 5.0])
>>> bool((batch.targets[:, 1:, :].argmax(-1) == batch.tokens[:, :-1]).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import torch

from emergence.base.errors import InvalidSizeError

GROUP_ELEMENTS = 1 << 17
"""On a CPU, runs with equal P are split into groups of at most GROUP_ELEMENTS // (P L^2) runs,
so that a group's (R_g, P_g, L, L) logits stay in cache (on a GPU one group holds them all)."""


@dataclass(frozen=True)
class RunMajorGroup:
    r"""The :math:`R_g` runs of a batch that share one count :math:`P_g`, laid out run by run.

    ``runs (R_g,)`` are their run ids, ``sequences (R_g, P_g)`` the rows of the ragged batch that
    hold each run's sequences, and ``one_hot``, ``targets (R_g, P_g, L, V)``, ``tokens (R_g, P_g, L)``
    the data in that layout (``one_hot[i, k] == batch.one_hot()[sequences[i, k]]``); ``target_tokens
    (R_g, P_g, L)`` the targets as tokens where the batch has them (:meth:`CopyTaskBatch.target_tokens`), else ``None``.
    """

    runs: torch.Tensor
    sequences: torch.Tensor
    one_hot: torch.Tensor
    targets: torch.Tensor
    tokens: torch.Tensor
    target_tokens: torch.Tensor | None = None


@dataclass
class CopyTaskBatch:
    """Ragged data of ``R`` runs: ``tokens (N,L)`` int64, ``targets (N,L,V)``, ``run (N,)``, ``counts (R,)``."""

    tokens: torch.Tensor
    targets: torch.Tensor
    run: torch.Tensor
    counts: torch.Tensor
    V: int
    _statistics: tuple | None = field(default=None, repr=False)
    _one_hot: torch.Tensor | None = field(default=None, repr=False)
    _run_major: tuple[RunMajorGroup, ...] | None = field(default=None, repr=False)
    _by_count: tuple[RunMajorGroup, ...] | None = field(default=None, repr=False)
    _target_tokens: tuple[torch.Tensor | None] | None = field(default=None, repr=False)

    @property
    def runs(self) -> int:
        return self.counts.shape[0]

    def one_hot(self) -> torch.Tensor:
        """:math:`X^\\mu` as a float tensor ``(N, L, V)`` (cached)."""
        if self._one_hot is None:
            self._one_hot = torch.nn.functional.one_hot(self.tokens, self.V).to(self.targets.dtype)
        return self._one_hot

    def target_tokens(self) -> torch.Tensor | None:
        """The targets as tokens, ``(N, L)`` int64 (-1 where a row is zero), where every target row is one-hot or
        zero (raw targets, either shift); ``None`` otherwise (centred targets).  Cached.

        >>> copy_task_batch([2], L=3, V=2, seeds=[0], shift="open").target_tokens()[:, 0].tolist()
        [-1, -1]
        >>> copy_task_batch([2], L=3, V=2, seeds=[0], targets="centred").target_tokens() is None
        True
        """
        if self._target_tokens is None:
            ones = self.targets == 1
            one_hot = bool(((self.targets == 0) | ones).all()) and bool((ones.sum(-1) <= 1).all())
            tokens = torch.where(ones.any(-1), ones.long().argmax(-1), -1) if one_hot else None
            self._target_tokens = (tokens,)
        return self._target_tokens[0]

    def run_major_groups(self, cache_blocks: bool = True) -> tuple["RunMajorGroup", ...]:
        """The data laid out run by run, one :class:`RunMajorGroup` per distinct count :math:`P_r` (cached).

        Runs with equal :math:`P_r` share one group, so no run is padded: a sweep point (every
        run at one :math:`P`) is a single group, and a batch mixing :math:`P` values costs
        :math:`\\sum_r P_r` sequences, not :math:`R \\max_r P_r`.  With ``cache_blocks`` (the tensor
        paths) a CPU group is split further into blocks of :data:`GROUP_ELEMENTS`; without it (the compiled
        loops, which stream each sequence once) each count is one group.
        """
        if not cache_blocks:
            if self._by_count is None:
                self._by_count = self._grouped(split=False)
            return self._by_count
        if self._run_major is None:
            self._run_major = self._grouped(split=True)
        return self._run_major

    def _grouped(self, split: bool) -> tuple["RunMajorGroup", ...]:
        """The groups of :meth:`run_major_groups`, CPU ones split into cache blocks if ``split``."""
        counts = self.counts.long()
        order = torch.argsort(self.run, stable=True)
        starts = torch.cumsum(counts, 0) - counts
        groups = []
        L = self.tokens.shape[1]
        target_tokens = self.target_tokens()
        for count in torch.unique(counts).tolist():
            equal = torch.nonzero(counts == count).flatten()
            per_group = max(1, GROUP_ELEMENTS // (count * L * L)) if split and self.one_hot().is_cpu else len(equal)
            for runs in torch.split(equal, per_group):
                sequences = order[starts[runs][:, None] + torch.arange(count, device=order.device)]
                groups.append(
                    RunMajorGroup(
                        runs=runs,
                        sequences=sequences,
                        one_hot=self.one_hot()[sequences],
                        targets=self.targets[sequences],
                        tokens=self.tokens[sequences],
                        target_tokens=None if target_tokens is None else target_tokens[sequences],
                    )
                )
        return tuple(groups)

    def statistics(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``K[r,j,k,u,w]``, ``Q[r,i,j,u,v]`` (both ``(R,L,L,V,V)``) and ``D (R,)`` of the module docstring (cached)."""
        if self._statistics is None:
            R, V = self.runs, self.V
            L = self.tokens.shape[1]
            K = self.targets.new_zeros(R, L * V, L * V)
            Q = torch.zeros_like(K)
            D = self.targets.new_zeros(R)
            for group in self.run_major_groups():
                runs, count = group.runs.shape[0], group.one_hot.shape[1]
                one_hot = group.one_hot.reshape(runs, count, L * V)
                targets = group.targets.reshape(runs, count, L * V)
                K[group.runs] = one_hot.transpose(1, 2) @ one_hot
                Q[group.runs] = one_hot.transpose(1, 2) @ targets
                D[group.runs] = (targets * targets).sum(dim=(1, 2))
            # position indices first: K[r, j, k, u, w] and Q[r, i, j, u, v], so that the model's
            # contractions over positions are plain batched matrix products
            K = K.reshape(R, L, V, L, V).permute(0, 1, 3, 2, 4).contiguous()
            Q = Q.reshape(R, L, V, L, V).permute(0, 3, 1, 2, 4).contiguous()
            self._statistics = (K, Q, D)
        return self._statistics


def previous_token_targets(
    tokens: torch.Tensor, V: int, shift: str = "cyclic", targets: str = "raw", dtype=torch.float64
) -> torch.Tensor:
    """One-hot previous-token targets ``(..., L, V)`` for ``tokens (..., L)``."""
    one_hot = torch.nn.functional.one_hot(tokens, V).to(dtype)
    shifted = torch.roll(one_hot, shifts=1, dims=-2)
    has_target = torch.ones(tokens.shape[-1], dtype=dtype, device=tokens.device)
    if shift == "open":
        has_target[0] = 0
    shifted = shifted * has_target[:, None]
    if targets == "centred":
        shifted = shifted - has_target[:, None] / V
    return shifted


def copy_task_batch(
    counts: Sequence[int],
    L: int,
    V: int,
    seeds: Sequence[int],
    shift: str = "cyclic",
    targets: str = "raw",
    dtype=torch.float64,
    device: str | torch.device = "cpu",
    tokens: str = "iid",
) -> CopyTaskBatch:
    """Data for runs with ``counts[r]`` sequences drawn with ``seeds[r]`` (CPU generator, then moved) from the token
    process ``tokens`` (``iid``, ``markov:rho=R``, ``zipf:alpha=A``; :mod:`.token_streams`)."""
    from emergence.validation.copy_task.token_streams import sample_tokens

    if L < 2 or V < 2:
        raise InvalidSizeError(f"the copy task needs L >= 2 and V >= 2, got L={L}, V={V}")
    if len(counts) != len(seeds) or not counts or min(counts) < 1:
        raise InvalidSizeError("every run needs a positive number of sequences and a seed")
    pieces = []
    for count, seed in zip(counts, seeds):
        generator = torch.Generator().manual_seed(int(seed))
        pieces.append(sample_tokens(tokens, int(count), L, V, generator))
    tokens = torch.cat(pieces).to(device)
    run = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor([int(c) for c in counts])).to(device)
    return CopyTaskBatch(
        tokens=tokens,
        targets=previous_token_targets(tokens, V, shift, targets, dtype),
        run=run,
        counts=torch.tensor([float(c) for c in counts], dtype=dtype, device=device),
        V=V,
    )
