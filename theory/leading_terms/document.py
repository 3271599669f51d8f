r"""The generated derivation document ``docs/derivations/leading_terms.md``.

Every formula is rendered from the SymPy objects of :mod:`emergence.theory.leading_terms.recursion`
(derived) and :mod:`emergence.theory.leading_terms.bounds` (quoted from Theorem 4.1); a test
regenerates the text and fails when the committed file differs.  Rewrite it with
``python -m emergence.theory.leading_terms.document``.

>>> [step.status for step in derivation_steps()]
['assumed', 'derived', 'derived', 'checked', 'assumed']
"""

from __future__ import annotations

from pathlib import Path

import sympy as sp

from emergence.theory.derivation_steps import DerivationStep, Equation, render_markdown, write_generated_document
from emergence.theory.leading_terms.bounds import (
    layer_limit, multi_layer_error_bounds, one_layer_error_bounds, one_layer_step_limit, step_limit,
)
from emergence.theory.leading_terms.recursion import eta, k, per_step_gradients, s, step_coefficients

DOCUMENT_PATH = Path(__file__).resolve().parents[2] / "docs" / "derivations" / "leading_terms.md"
WEIGHTS = {"output": "W_O", "value": "V^{(l)}", "key_query": "W^{(l)}, P^{(l)}"}
SYMBOLS = {"output": "a_s", "value": "b_s", "key_query": "c_s"}
STATISTICS = {"output": r"\bar B", "value": r"\bar\Phi^\top\bar B^\top", "key_query": r"\bar Q,\ \Delta"}


def derivation_steps() -> list[DerivationStep]:
    """The leading-term derivation: leading-order gradients, recursion, closed forms, check, bounds."""
    a, b = sp.symbols("a_k b_k")
    gradients = per_step_gradients(a, b)
    coefficients = step_coefficients()
    paper = {"output": s, "value": sp.binomial(s, 2), "key_query": 3 * sp.binomial(s, 4) + 2 * sp.binomial(s, 3)}
    powers = {"output": 1, "value": 2, "key_query": 4}
    difference = {name: sp.simplify(sp.expand_func(paper[name]) - coefficients[name] / eta ** powers[name])
                  for name in paper}
    bounds, one_layer = multi_layer_error_bounds(), one_layer_error_bounds()
    return [
        DerivationStep(
            "leading_order", "Leading order at zero initialisation",
            "With h^(l) ~ X, attention ~ the uniform causal average A0 and residual ~ Y - 1/V, each negative "
            "gradient is a fixed corpus statistic times a scalar that depends only on the current coefficients "
            "a_k (W_O = a_k B), b_k (V = b_k Phi^T B^T): the chain rule through F = h W_O and h = X + A X V. "
            "Values in units of the statistic.",
            tuple(Equation(f"gradient_{name}", rf"-\partial L/\partial {WEIGHTS[name]}", gradients[name])
                  for name in gradients),
            "assumed"),
        DerivationStep(
            "recursion", "Gradient-descent recursion",
            "Constant rate eta from zero: a_{k+1} = a_k + eta, b_{k+1} = b_k + eta a_k, c_{k+1} = c_k + eta a_k b_k; "
            "triangular, so SymPy sums it in the order a, b, c.",
            (Equation("a_k", sp.Symbol("a_k"), coefficients["output"].subs(s, k)),
             Equation("b_k", sp.Symbol("b_k"), coefficients["value"].subs(s, k)),
             Equation("c_k", sp.Symbol("c_k"), coefficients["key_query"].subs(s, k)))),
        DerivationStep(
            "coefficients", "Step coefficients after s steps (Theorem 4.1)",
            "Each weight is its coefficient times its statistic: W_O = a_s B, V = b_s Phi^T B^T, W = c_s Q, P = c_s Delta.",
            tuple(Equation(name, f"{SYMBOLS[name]}\\ ({WEIGHTS[name]} / {STATISTICS[name]})", coefficients[name])
                  for name in coefficients)),
        DerivationStep(
            "paper_form", "Comparison with the paper's binomial forms",
            "The paper states s, C(s,2), 3C(s,4) + 2C(s,3) (times eta, eta^2, eta^4); the difference from the summed "
            "coefficients simplifies to zero.",
            tuple(Equation(f"difference_{name}", f"{sp.latex(paper[name])} - {SYMBOLS[name]}/\\eta^{powers[name]}",
                           difference[name]) for name in paper),
            "checked"),
        DerivationStep(
            "bounds", "Error bounds and window (quoted from Theorem 4.1, not derived)",
            "Frobenius bounds on weight - leading term, valid for s below the step limit when L <= sqrt(T)/4, "
            "T >= 60, V >= 500; the one-layer variant has its own constants and window.",
            tuple(Equation(f"bound_{name}", f"\\epsilon_{{{WEIGHTS[name]}}}", bounds[name]) for name in bounds)
            + tuple(Equation(f"one_layer_bound_{name}", f"\\epsilon^{{L=1}}_{{{WEIGHTS[name]}}}", one_layer[name])
                    for name in one_layer)
            + (Equation("step_limit", "s_{max}", step_limit()),
               Equation("one_layer_step_limit", "s_{max}^{L=1}", one_layer_step_limit()),
               Equation("layer_limit", "L_{max}", layer_limit())),
            "assumed"),
    ]


def leading_terms_document() -> str:
    """The full Markdown text of ``docs/derivations/leading_terms.md``."""
    lines = [
        "# Leading-term weights: the derivation (generated)", "",
        "<!-- Generated by theory/leading_terms/document.py from the SymPy objects; do not edit by hand. "
        "Regenerate with `python -m emergence.theory.leading_terms.document`. -->", "",
        "Im, Oh, Fang, Li, *How Do Transformers Learn to Associate Tokens* (arXiv 2601.19208), Definition 3.1 "
        "and Theorem 4.1. The step coefficients are derived here by summing the leading-order gradient "
        "recursion (`theory/leading_terms/recursion.py`); the error bounds and window are quoted. The corpus "
        "statistics are computed in `numerics/leading_terms/basis_statistics.py` (see `docs/leading_terms.md`).", "",
        render_markdown(derivation_steps(), heading_level=2),
    ]
    return "\n".join(lines).rstrip() + "\n"


def write_document(path: Path = DOCUMENT_PATH) -> Path:
    return write_generated_document(path, leading_terms_document())


if __name__ == "__main__":
    print(write_document())
