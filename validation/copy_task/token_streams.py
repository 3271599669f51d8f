r"""Token streams for the copy task: i.i.d. uniform, persistence (Markov) and Zipf, drawn in batches.

``markov:rho=R``: :math:`x_0` uniform; for :math:`\ell \ge 1`, :math:`x_\ell = x_{\ell-1}` with probability
:math:`\rho`, else a fresh uniform token.  Drawn at once: fresh tokens ``(count, L)`` and repeat flags; each
position copies the fresh token of the last position that did not repeat (a running maximum of indices),
so the stream is stationary with lag joints :math:`J_k = \rho^kI/V + (1-\rho^k)\mathbf 1\mathbf 1^T/V^2`.
``zipf:alpha=A``: i.i.d. tokens with :math:`\pi_u\propto(u+1)^{-\alpha}`.  ``corpus:PATH``: windows of L consecutive class
ids inside one document of the corpus, drawn uniformly among all such windows (:func:`corpus_windows`).
``iid`` draws exactly what the i.i.d. copy task always drew (``torch.randint`` from the same generator), so its data are unchanged.

>>> g = torch.Generator().manual_seed(0)
>>> sample_tokens("markov:rho=0.9", 2, 8, 4, g).shape
torch.Size([2, 8])
"""

from __future__ import annotations

import numpy as np
import torch

from emergence.numerics.copy_head.token_process import TokenProcess


def sample_tokens(process: str | TokenProcess, count: int, L: int, V: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` sequences ``(count, L)`` int64 of ``process`` (its text or a :class:`TokenProcess`) from ``generator``."""
    process = process if isinstance(process, TokenProcess) else TokenProcess.parse(process)
    if process.kind == "iid":
        return torch.randint(V, (count, L), generator=generator)
    if process.kind == "corpus":
        return corpus_windows(process, count, L, V, generator)
    if process.kind == "zipf":
        pi = torch.as_tensor(process.unigram(V), dtype=torch.float64)
        return torch.multinomial(pi, count * L, replacement=True, generator=generator).reshape(count, L)
    fresh = torch.randint(V, (count, L), generator=generator)
    repeat = torch.rand((count, L), generator=generator, dtype=torch.float64) < process.parameter
    repeat[:, 0] = False
    positions = torch.arange(L).expand(count, L)
    last_fresh = torch.cummax(torch.where(repeat, torch.zeros_like(positions), positions), dim=1).values
    return fresh.gather(1, last_fresh)


def corpus_windows(process: TokenProcess, count: int, L: int, V: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` windows ``(count, L)`` int64 of the corpus's class ids, each L consecutive tokens of one document
    (documents shorter than L hold none), drawn uniformly with replacement among all windows by ``generator``."""
    from emergence.numerics.copy_head.corpus_process import corpus_documents, window_starts

    documents = corpus_documents(process.source, process.tokenizer, V, L)
    offsets, lengths = window_starts(documents, L)
    stream = torch.as_tensor(np.concatenate(documents))
    first = torch.as_tensor(np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    index = torch.randint(int(lengths.sum()), (count,), generator=generator)
    document = torch.searchsorted(first, index, right=True) - 1
    start = torch.as_tensor(offsets)[document] + index - first[document]
    return stream[start[:, None] + torch.arange(L)]
