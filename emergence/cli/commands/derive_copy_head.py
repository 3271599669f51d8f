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


def add_arguments(parser):
    parser.add_argument("--attention", choices=("linear", "softmax"), default="linear",
                        help="linear or softmax attention (default: linear)")
    parser.add_argument("--architecture", choices=("T", "M"), default="T",
                        help="T: queries/keys on token+position (default); M: free positional logits")
    parser.add_argument("--format", choices=FORMATS, default="text", help="text (default), latex or json")


def run(args) -> int:
    from emergence.api import derive

    derivation = derive("copy-head", args.attention, args.architecture)
    if args.format == "json":
        print(derivation.to_json())
    elif args.format == "latex":
        print(f"% {derivation.note}")
        print(derivation.latex(), end="")
    else:
        print(derivation.note)
        print(f"copy-head, {args.attention} attention, architecture {args.architecture}")
        print(derivation.text())
    return 0
