r"""Token streams for the copy task: i.i.d. uniform, persistence (Markov) and Zipf, drawn in batches.

``markov:rho=R``: :math:`x_0` uniform; for :math:`\ell \ge 1`, :math:`x_\ell = x_{\ell-1}` with probability
:math:`\rho`, else a fresh uniform token.  Drawn at once: fresh tokens ``(count, L)`` and repeat flags; each
position copies the fresh token of the last position that did not repeat (a running maximum of indices),
so the stream is stationary with lag joints :math:`J_k = \rho^kI/V + (1-\rho^k)\mathbf 1\mathbf 1^T/V^2`.
``zipf:alpha=A``: i.i.d. tokens with :math:`\pi_u\propto(u+1)^{-\alpha}`.  ``iid`` draws exactly what the
i.i.d. copy task always drew (``torch.randint`` from the same generator), so its data are unchanged.

>>> g = torch.Generator().manual_seed(0)
>>> sample_tokens("markov:rho=0.9", 2, 8, 4, g).shape
torch.Size([2, 8])
"""

from __future__ import annotations

import torch

from emergence.numerics.copy_head.token_process import TokenProcess


def sample_tokens(process: str | TokenProcess, count: int, L: int, V: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` sequences ``(count, L)`` int64 of ``process`` (its text or a :class:`TokenProcess`) from ``generator``."""
    process = process if isinstance(process, TokenProcess) else TokenProcess.parse(process)
    if process.kind == "iid":
        return torch.randint(V, (count, L), generator=generator)
    if process.kind == "zipf":
        pi = torch.as_tensor(process.unigram(V), dtype=torch.float64)
        return torch.multinomial(pi, count * L, replacement=True, generator=generator).reshape(count, L)
    fresh = torch.randint(V, (count, L), generator=generator)
    repeat = torch.rand((count, L), generator=generator, dtype=torch.float64) < process.parameter
    repeat[:, 0] = False
    positions = torch.arange(L).expand(count, L)
    last_fresh = torch.cummax(torch.where(repeat, torch.zeros_like(positions), positions), dim=1).values
    return fresh.gather(1, last_fresh)
