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

The one-hot input X (batch, T, V) is never built: for one-hot rows x_t = e_{i_t},
x_t W x_\tau^\top = W[i_t, i_\tau] and (X V)_t = V[i_t], so the first layer gathers rows and
entries of its matrices (embedding lookups) and adds X by a scatter of ones into the dense
residual h^{(1)} = X + A X V (batch, T, V), the first activation that is dense anyway.  At the
paper's scale (batch 2048, T = 200, V = 3000, float64) each (batch, T, V) activation is 9.8 GB;
the first layer used to build X, X W, A X and A X V besides h^{(1)}, and now V[i] and A V[i].
Measured for one forward and backward pass (N = 64, T = 64, V = 2000, L = 2, one thread, on
a shared 2-core machine at load 5): peak resident memory above the model 0.627 -> 0.560 GiB (one
activation: 0.061 GiB), 15.5 -> 10.4 s.  Later layers act on the dense residual as written.
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

    def attention(self, logits: torch.Tensor) -> torch.Tensor:
        """Row-softmax of the token logits (batch, T, T) plus DM(P), causally masked: shape (batch, T, T)."""
        T = logits.shape[1]
        logits = (logits + self.position[self.lag[:T, :T]]).masked_fill(~self.causal[:T, :T], float("-inf"))
        return F.softmax(logits, dim=-1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """h + A h V for a dense residual h (batch, T, V)."""
        return h + self.attention(h @ self.key_query @ h.transpose(1, 2)) @ h @ self.value

    def forward_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """X + A X V for one-hot X of token ids (batch, T), by lookups: W[i_t, i_tau] and V[i_t]."""
        logits = self.key_query[tokens[:, :, None], tokens[:, None, :]]
        h = self.attention(logits) @ self.value[tokens]
        return h.scatter_add(2, tokens[:, :, None], torch.ones_like(h[:, :, :1]))


class LeadingTermTransformer(nn.Module):
    """L attention layers and an output matrix, acting on one-hot token sequences (batch, T)."""

    def __init__(self, vocab_size: int, context_length: int, layers: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.layers = nn.ModuleList(AttentionLayer(vocab_size, context_length) for _ in range(layers))
        self.output = nn.Parameter(torch.zeros(vocab_size, vocab_size))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits F (batch, T, V) for token ids (batch, T); the one-hot input is not built (module docstring)."""
        h = self.layers[0].forward_tokens(tokens)
        for layer in self.layers[1:]:
            h = layer(h)
        return h @ self.output

    def loss(self, sequences: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over all N T positions of windows (N, T + 1)."""
        logits = self(sequences[:, :-1])
        return F.cross_entropy(logits.reshape(-1, self.vocab_size), sequences[:, 1:].reshape(-1))
