"""Copy-head emergence (arXiv 2606.12058): the model, the W-marginal, the population average, the
order-parameter reduction, the Landau expansion (linear) or the softmax pushforward and P* asymptotics,
and the predicted losses.

This is a reconstruction inside the paper's framework (only its abstract is available); every
printed formula is derived by SymPy from the model definition in theory/copy_head.
"""

from __future__ import annotations

NAME = "copy-head"
HELP = "derivation of the copy-head phase transitions (reconstruction)"
FORMATS = ("text", "latex", "json")
RECONSTRUCTION_NOTE = (
    "Reconstruction inside the framework of Lavie et al., arXiv 2606.12058 (only the abstract is "
    "available): these are the engine's own derivations, not the paper's equations."
)


def add_arguments(parser):
    parser.add_argument("--attention", choices=("linear", "softmax"), default="linear",
                        help="linear or softmax attention (default: linear)")
    parser.add_argument("--architecture", choices=("T", "M"), default="T",
                        help="T: queries/keys on token+position (default); M: free positional logits")
    parser.add_argument("--format", choices=FORMATS, default="text", help="text (default), latex or json")


def run(args) -> int:
    from emergence.theory.copy_head.steps import derivation_steps
    from emergence.theory.derivation_steps import render_json, render_latex, render_text

    steps = derivation_steps(args.attention, args.architecture)
    if args.format == "json":
        print(render_json(steps, theory="copy-head", attention=args.attention,
                          architecture=args.architecture, note=RECONSTRUCTION_NOTE))
    elif args.format == "latex":
        print(f"% {RECONSTRUCTION_NOTE}")
        print(render_latex(steps), end="")
    else:
        print(RECONSTRUCTION_NOTE)
        print(f"copy-head, {args.attention} attention, architecture {args.architecture}")
        print(render_text(steps))
    return 0
