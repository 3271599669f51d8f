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
    from emergence.numerics.copy_head.scaling import scaling_report
    from emergence.numerics.io import provenance, to_json_text, write_json_atomic
    from emergence.theory.copy_head.conventions import Convention

    convention = Convention.parse(args.convention)
    report = scaling_report(args.claim, convention, dps=args.dps, fast=args.quick,
                            reference=derived_reference(args.claim, convention))
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
        if "reference" in fit:
            compared = fit["reference"]
            print(f"    derived form {compared['form']}: ratio {compared['ratio'][0]:.6g} .. {compared['ratio'][-1]:.6g}"
                  + (f"; derived law constant {compared['law_constant']:.6g}" if compared["law_constant"] else ""))
    print(f"  holds: {str(report['holds']).lower()}")
    if args.json == "-":
        print(to_json_text(report), end="")
    elif args.json:
        print(f"wrote {write_json_atomic(args.json, report)}")
    return 0



def derived_reference(claim: str, convention):
    """The engine's derived large-size form of the transition, where theory/copy_head has one.

    softmax-first-order: the dominant balance P* = L V ell^3 / (beta0 sG (V-1)(ell-1)),
    ell = 1 - W_{-1}(-2e^2/L)/2 (emergence.theory.copy_head.asymptotics), for beta = beta0/L and an
    L-independent logit variance (a = 0); its law constant lim leading/(L ln^2 L) by SymPy.
    linear-second-order: the kernel's closed-form P1 with lim P1/V^2 from emergence.theory.copy_head.landau
    (model T scalings a = 0, d = 1, e = 0, beta0 = 1).  Otherwise None (the kernel forms are used).
    """
    import sympy as sp

    from emergence.numerics.copy_head.reduced_action import generated_kernels, model_scales_mp
    from emergence.numerics.copy_head.scaling import CLAIMS, Reference, kernel_reference

    model_t = convention.architecture == "T" and convention.a == 0 and convention.d == 1 and convention.e == 0
    if not model_t:
        return None
    kernels = generated_kernels()
    if claim == "softmax-first-order" and convention.r == 0:  # the balance below needs lambda fixed in L
        from emergence.theory.copy_head.asymptotics import ell_of_L, leading_P_star

        forms = leading_P_star()
        symbols = {s.name: s for s in forms["balance"].free_symbols | forms["leading"].free_symbols}
        names = ("L", "V", "beta0", "sG", "ell")
        balance = sp.lambdify([symbols[n] for n in names], forms["balance"], "mpmath")
        V_fixed = CLAIMS[claim].sweeps[0].fixed
        constant = sp.limit(forms["leading"] / (symbols["L"] * sp.log(symbols["L"]) ** 2), symbols["L"], sp.oo)
        constant = constant.subs({symbols["V"]: V_fixed, symbols["beta0"]: convention.beta0,
                                  symbols["sG"]: convention.sigma_G2})

        def value(L, V, ctx):
            if L <= 2 * float(ctx.e) ** 3:
                return None
            sG, _, _ = model_scales_mp(kernels, "softmax", L, V, convention, ctx)
            return balance(ctx.mpf(L), ctx.mpf(V), ctx.mpf(convention.beta0), sG, ell_of_L(L, ctx))

        return Reference("L*V*ell**3/(beta0*sG*(V - 1)*(ell - 1)), ell = 1 - LambertW(-2*exp(2)/L, -1)/2",
                         value, True, float(constant))
    matched = convention.attention_normalisation_exponent == 1 - convention.r / 2  # lam*s as for A = G/L, lam = 1
    if claim == "linear-second-order" and convention.beta0 == 1 and matched:
        from emergence.theory.copy_head.landau import leading_second_order_point

        coefficient = leading_second_order_point()["coefficient_of_V2"]
        values = {s: v for s in coefficient.free_symbols
                  for name, v in (("sigma2", convention.sigma_G2), ("lam", convention.sigma_W2)) if s.name == name}
        closed = kernel_reference(claim, convention, kernels)
        law_constant = float(coefficient.subs(values)) if convention.c == 0 else None
        return Reference(closed.form, closed.value, True, law_constant)
    return None
