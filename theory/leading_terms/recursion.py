r"""Step coefficients of the leading-term weights, derived from the gradient recursion.

At leading order (h^{(l)} \approx X, A \approx A_0, residual \approx Y - U) every weight
after k completed gradient steps is a scalar multiple of one corpus statistic:

.. math::

    W_O = a_k \bar B,\quad V^{(l)} = b_k \bar\Phi^\top\bar B^\top,\quad
    W^{(l)} = c_k \bar Q,\quad P^{(l)} = c_k \Delta .

The chain rule fixes how each negative gradient depends on the others:
:math:`-\partial L/\partial W_O \approx \bar B` (nothing upstream),
:math:`-\partial L/\partial V^{(l)} \approx (A_0X)^\top R\,W_O^\top` (linear in W_O, so
coefficient a_k), and :math:`-\partial L/\partial W^{(l)}` passes through the softmax
Jacobian the product of the value and the output weight (coefficient a_k b_k).  Gradient
descent with rate \eta then gives the recursion

.. math::

    a_{k+1} = a_k + \eta,\qquad b_{k+1} = b_k + \eta a_k,\qquad
    c_{k+1} = c_k + \eta a_k b_k,\qquad a_0 = b_0 = c_0 = 0,

which :func:`step_coefficients` solves by symbolic summation over k = 0..s-1.  The
binomial forms :math:`s,\ \binom{s}{2},\ 3\binom{s}{4} + 2\binom{s}{3}` of the paper are
*not* typed in here; tests compare them with the summation as an independent check.

>>> coefficients = step_coefficients()
>>> [sp.factor(coefficients[name]) for name in ("output", "value", "key_query")]
[eta*s, eta**2*s*(s - 1)/2, eta**4*s*(s - 2)*(s - 1)*(3*s - 1)/24]
"""

from __future__ import annotations

import sympy as sp

s = sp.Symbol("s", integer=True, nonnegative=True)
"""Number of completed gradient steps."""
k = sp.Symbol("k", integer=True, nonnegative=True)
"""Summation index: steps completed before the current one."""
eta = sp.Symbol("eta", positive=True)
"""Constant learning rate."""


def per_step_gradients(output_coefficient: sp.Expr, value_coefficient: sp.Expr) -> dict[str, sp.Expr]:
    r"""Leading-order negative gradients, in units of their statistic, at given weights.

    ``output_coefficient`` a and ``value_coefficient`` b are the current multiples of
    :math:`\bar B` in W_O and of :math:`\bar\Phi^\top\bar B^\top` in V.  The output gradient
    does not depend on them, the value gradient is linear in W_O, and the key--query (and
    positional) gradient is the product of both, as the chain rule through
    :math:`F = h W_O` and :math:`h = X + A X V` dictates.
    """
    return {
        "output": sp.Integer(1),
        "value": output_coefficient,
        "key_query": output_coefficient * value_coefficient,
    }


def step_coefficients(steps: sp.Expr = s) -> dict[str, sp.Expr]:
    r"""Coefficients a_s, b_s, c_s after ``steps`` steps, by summing \eta \times gradient.

    :math:`x_s = \sum_{j=0}^{s-1} \eta\, g_x(a_j, b_j)`, with the per-step gradient
    g_x of :func:`per_step_gradients` evaluated at the closed forms already found for the
    coefficients it depends on.  The recursion is triangular, so summing in the order
    a, b, c solves it exactly.  Keys: ``output`` (a), ``value`` (b), ``key_query`` (c,
    also the positional coefficient).
    """
    j = sp.Symbol("j", integer=True, nonnegative=True)

    def accumulated(gradient_at_j: sp.Expr) -> sp.Expr:
        return sp.factor(sp.summation(eta * gradient_at_j, (j, 0, k - 1)))

    output_after_k = accumulated(per_step_gradients(0, 0)["output"])
    value_after_k = accumulated(per_step_gradients(output_after_k.subs(k, j), 0)["value"])
    key_query_after_k = accumulated(
        per_step_gradients(output_after_k.subs(k, j), value_after_k.subs(k, j))["key_query"]
    )
    return {
        "output": sp.factor(output_after_k.subs(k, steps)),
        "value": sp.factor(value_after_k.subs(k, steps)),
        "key_query": sp.factor(key_query_after_k.subs(k, steps)),
    }


PAPER_FORMS: dict[str, sp.Expr] = {
    "output": s, "value": sp.binomial(s, 2), "key_query": 3 * sp.binomial(s, 4) + 2 * sp.binomial(s, 3),
}
"""The paper's coefficients (Theorem 4.1) in units of eta**RATE_POWERS[name]: input, compared below."""
RATE_POWERS = {"output": 1, "value": 2, "key_query": 4}
"""The power of the learning rate eta in each coefficient."""


def differences_from_paper() -> dict[str, sp.Expr]:
    """Paper's form minus the summed coefficient (in units of eta**power), simplified: zero when they agree.

    >>> differences_from_paper()
    {'output': 0, 'value': 0, 'key_query': 0}
    """
    derived = step_coefficients()
    return {name: sp.simplify(sp.expand_func(form) - derived[name] / eta ** RATE_POWERS[name])
            for name, form in PAPER_FORMS.items()}


def comparison_with_paper() -> list[dict]:
    """Per coefficient, JSON-ready: the summed form (SymPy text and LaTeX), the paper's form, whether
    their difference simplifies to zero, and the values at s = 1..6 for eta = 1."""
    derived, differences = step_coefficients(), differences_from_paper()
    rows = []
    for name, form in PAPER_FORMS.items():
        coefficient = sp.factor(derived[name] / eta ** RATE_POWERS[name])
        rows.append({"name": name, "sympy": sp.sstr(derived[name]), "latex": sp.latex(derived[name]),
                     "paper_form": sp.sstr(form), "equals_paper_form": bool(differences[name] == 0),
                     "values_s_1_to_6": [int(coefficient.subs(s, value)) for value in range(1, 7)]})
    return rows

