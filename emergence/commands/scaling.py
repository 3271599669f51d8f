"""Check one of the paper's scaling claims on the reduced actions at high precision.

The transition is computed on exponentially spaced sizes to --dps digits; the report gives
the ratio to the claimed law, the local log-log exponents, the fitted sub-leading form and a
verdict whose criterion is stated in numerics/asymptotics.py and docs/copy_head_scaling.md.
"""

from __future__ import annotations

NAME = "scaling"
HELP = "check a copy-head scaling claim (P* ~ L ln^2 L, P1 ~ V^2, crossover ~ L^3/2 V^1/2)"

CLAIM_NAMES = ("softmax-first-order", "linear-second-order", "linear-crossover")


def add_arguments(parser):
    parser.add_argument("--claim", required=True, choices=CLAIM_NAMES)
    parser.add_argument("--convention", default="", help="e.g. a=0,c=0,d=1,e=0 (default: model T)")
    parser.add_argument("--dps", type=int, default=50, help="decimal digits of the mpmath computation (default 50)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes only (softmax: L <= 4096)")
    parser.add_argument("--json", help="write the result as JSON to PATH, or - for stdout")


def run(args) -> int:
    from numerics.copy_head.scaling import scaling_report
    from numerics.io import provenance, to_json_text, write_json_atomic
    from theory.copy_head.conventions import Convention

    convention = Convention.parse(args.convention)
    report = scaling_report(args.claim, convention, dps=args.dps, fast=args.quick)
    report["convention"] = convention.as_dict()
    report["provenance"] = provenance({k: v for k, v in vars(args).items() if k != "handler"}, seed=None)
    print(f"claim {report['claim']}: transition ~ {report['law']} "
          f"(model {convention.architecture}, reconstruction; {args.dps} digits)")
    for variable, exponents in report["local_exponent"].items():
        sizes = [s[variable] for s in report["sizes"] if s["sweep"] == variable]
        tail = exponents[-3:]
        fit = report["fit"][variable]
        print(f"  sweep over {variable}: {variable} = {sizes[0]} .. {sizes[-1]} ({len(sizes)} sizes)")
        print(f"    ratio to law: {report['ratio'][variable][0]:.6g} .. {report['ratio'][variable][-1]:.6g}")
        print(f"    measured local exponent d ln P / d ln {variable}: {exponents[-1]:.4f} "
              f"(spread over the last {len(tail)}: {max(tail) - min(tail):.4f})")
        print(f"    residual exponent of the ratio at the largest size: {fit['residual_exponent'][-1]:+.4f} "
              f"(tolerance {report['tolerance']})")
        coefficients = ", ".join(f"{k}={v:.6g}" for k, v in fit["coefficients"].items())
        print(f"    fit {fit['form']}: {coefficients}; relative rms residual {fit['residual']:.2e}")
    print(f"  holds: {str(report['holds']).lower()}")
    if args.json == "-":
        print(to_json_text(report), end="")
    elif args.json:
        print(f"wrote {write_json_atomic(args.json, report)}")
    return 0

