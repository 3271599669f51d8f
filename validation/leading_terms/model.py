r"""The attention-only transformer of Definition 3.1 (Im et al., arXiv 2601.19208), in torch.

No embedding, no MLP, no LayerNorm, no 1/sqrt(d), no biases, one head per layer; tokens
enter as one-hot rows.  Layer l has a key-query matrix W (V x V), a value matrix V (V x V)
and a relative positional vector P (T,); one output matrix W_O (V x V) reads out:

.. math::

    h^{(0)} = X,\qquad
    h^{(l)} = h^{(l-1)} + \mathrm{softmax}\big(\mathrm{Mask}(h^{(l-1)} W^{(l)} h^{(l-1)\top}
              + \mathrm{DM}(P^{(l)}))\big)\, h^{(l-1)} V^{(l)},\qquad F = h^{(L)} W_O,

with the additive causal mask and DM(P)_{t\tau} = P_{t-\tau} (lag 0 on the diagonal).
The logit S_{t\tau} = x_t W x_\tau^\top + P_{t-\tau} has the query on the left.  Every
parameter starts at zero.

>>> model = LeadingTermTransformer(vocab_size=5, context_length=4, layers=2)
>>> model(torch.tensor([[0, 1, 2, 3]])).shape
torch.Size([1, 4, 5])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class AttentionLayer(nn.Module):
    """One residual attention layer with key-query W, value V and positional vector P."""

    def __init__(self, vocab_size: int, context_length: int):
        super().__init__()
        self.key_query = nn.Parameter(torch.zeros(vocab_size, vocab_size))
        self.value = nn.Parameter(torch.zeros(vocab_size, vocab_size))
        self.position = nn.Parameter(torch.zeros(context_length))
        t = torch.arange(context_length)
        self.register_buffer("lag", (t[:, None] - t[None, :]).clamp(min=0), persistent=False)
        self.register_buffer("causal", t[:, None] >= t[None, :], persistent=False)

    def attention(self, h: torch.Tensor) -> torch.Tensor:
        """Row-softmax of the masked logits, shape (batch, T, T)."""
        T = h.shape[1]
        logits = h @ self.key_query @ h.transpose(1, 2) + self.position[self.lag[:T, :T]]
        logits = logits.masked_fill(~self.causal[:T, :T], float("-inf"))
        return F.softmax(logits, dim=-1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.attention(h) @ h @ self.value


class LeadingTermTransformer(nn.Module):
    """L attention layers and an output matrix, acting on one-hot token sequences (batch, T)."""

    def __init__(self, vocab_size: int, context_length: int, layers: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.layers = nn.ModuleList(AttentionLayer(vocab_size, context_length) for _ in range(layers))
        self.output = nn.Parameter(torch.zeros(vocab_size, vocab_size))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits F (batch, T, V) for token ids (batch, T)."""
        h = F.one_hot(tokens, self.vocab_size).to(self.output.dtype)
        for layer in self.layers:
            h = layer(h)
        return h @ self.output

    def loss(self, sequences: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over all N T positions of windows (N, T + 1)."""
        logits = self(sequences[:, :-1])
        return F.cross_entropy(logits.reshape(-1, self.vocab_size), sequences[:, 1:].reshape(-1))
