r"""The copy-task experiment, assembled once: train or sample models over a grid of :math:`P`
and compare them with the copy-head theory (``emergence validate copy-head``, the demo,
:func:`emergence.api.run_copy_experiment`).

:class:`CopyExperiment` is the whole configuration; :func:`run_copy_sweep` builds one
sweep point per :math:`P` (:func:`emergence.validation.copy_task.experiment.point_config`),
runs them resumably (:func:`emergence.base.sweeps.run_sweep`, keyed on the
configuration and the engine's code), reduces them to measured curves and transitions, and
puts the theory's phase diagram on a fine grid (:math:`P_{\min}/2` to :math:`2P_{\max}`,
200 log-spaced points, plus the measured points themselves) beside them.

After the grid, up to ``bisections`` extra points narrow the measured transitions
(:func:`~emergence.validation.copy_task.analysis.next_bisection`): each is the geometric midpoint of a
current bracket (:func:`~emergence.validation.copy_task.analysis.bisection_point`), run like any grid
point and stored in the same folder; the brackets are read again from all converged points.  A softmax
jump is bisected every time; a linear transition only while its bracket straddles a bound of the
agreement factor, so a linear sweep stops as soon as every bracket decides.  Where a linear transition's
(or a continuous softmax onset's) steepest rise lies on the grid's last interval, the next point is one grid step
above the grid (:func:`~emergence.validation.copy_task.analysis.extension_point`), while that interval starts
within the agreement factor of the prediction.
:func:`grid_around_prediction` gives the grid the verdict asks for: softmax, :data:`GRID_POINTS` points
spanning :math:`[P^*/3, 3P^*]` around the predicted :math:`P^*`; linear, points over
:math:`[P_1/2, 2P_1]` and :math:`[P_G/2, 2P_G]` around the predicted second-order point and crossover.

>>> CopyExperiment("linear", 8, 4, (8, 64)).theory_grid()[[0, -1]]
array([  4., 128.])
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

THEORY_POINTS = 200
"""Points of the theory's curve."""


@dataclass(frozen=True)
class CopyExperiment:
    """One copy-task validation: sizes, the ``P`` grid, the optimizer and its budget.

    ``convention``: text such as ``architecture=M,a=1`` (model T defaults); ``workers``: local
    processes (1: in this process, one torch thread; default: the CPU count); ``executor``:
    ``local``, ``dask`` (a LocalCluster of ``workers``) or ``dask:ADDRESS``; ``objective``: ``marginal``
    (default: the readout-marginal action whose MAP the theory's saddle is) or ``joint``; ``out``: folder
    of the resumable per-point results (default: a new temporary folder); ``dtype``: float32 by
    default (the potential and its gradient agree with float64 to 1e-7 and 1e-6 at the default
    sizes, tests/test_float32_training.py), as on the command line.  ``batch_points``: the most sweep points
    trained or sampled as one batched model (:func:`~emergence.validation.copy_task.experiment.run_copy_points`,
    Adam and SGLD; a point's result is the same either way, to rounding); default (``None``): every point at once on
    a GPU, where a point alone is launch-bound; one point per model on a CPU, where the workers run points
    in parallel.
    """

    attention: str
    L: int
    V: int
    P: tuple[int, ...]
    optimizer: str = "adam"
    objective: str = "marginal"
    seeds: int = 2
    convention: str = ""
    adam_steps: int = 2000
    adam_lr: float = 0.05
    sgld_burn_in: int = 2000
    sgld_draws: int = 50
    sgld_thin: int = 20
    chains: int = 2
    dtype: str = "float32"
    seed: int = 0
    device: str | None = None
    workers: int | None = None
    executor: str = "local"
    out: str | None = None
    bisections: int = 0
    batch_points: int | None = None
    tokens: str = "iid"
    progress: bool = field(default=True, compare=False)

    def checked(self) -> CopyExperiment:
        """This configuration with every field checked (:class:`~emergence.base.errors.InvalidArgumentError`
        naming the field) and in the engine's form: whole numbers as ``int``, ``P`` a tuple."""
        from dataclasses import replace

        from emergence.base import arguments as check

        def count(name: str, value, low: int = 1) -> int:
            return check.integer(name, value, low)

        def maybe_count(name: str, value) -> int | None:
            return check.optional(check.integer, name, value, 1)

        return replace(
            self, attention=check.choice("attention", self.attention, ("linear", "softmax")),
            L=count("L", self.L, 2), V=count("V", self.V, 2), P=check.sequence("P", self.P, count),
            optimizer=check.choice("optimizer", self.optimizer, ("adam", "sgld")),
            objective=check.choice("objective", self.objective, ("marginal", "joint")),
            seeds=count("seeds", self.seeds), convention=check.text("convention", self.convention, empty=True),
            adam_steps=count("adam_steps", self.adam_steps), adam_lr=check.positive("adam_lr", self.adam_lr),
            sgld_burn_in=count("sgld_burn_in", self.sgld_burn_in, 0), sgld_draws=count("sgld_draws", self.sgld_draws, 4),
            sgld_thin=count("sgld_thin", self.sgld_thin), chains=count("chains", self.chains),
            dtype=check.choice("dtype", self.dtype, ("float32", "float64")), seed=check.seed("seed", self.seed),
            device=check.optional(check.choice, "device", self.device, ("cpu", "cuda")),
            workers=maybe_count("workers", self.workers), executor=check.executor("executor", self.executor),
            out=None if self.out is None else str(check.path("out", self.out)),
            bisections=count("bisections", self.bisections, 0), batch_points=maybe_count("batch_points", self.batch_points),
            tokens=_token_process("tokens", self.tokens), progress=check.flag("progress", self.progress))

    def check(self) -> None:
        """One-line :class:`~emergence.base.errors.EmergenceError` on arguments, sizes or budgets that cannot run."""
        from emergence.base.errors import InvalidArgumentError

        checked = self.checked()
        self.check_memory()
        _check_token_statistics(checked.tokens, checked.L, checked.V)
        if len(set(self.P)) < 2:
            raise InvalidArgumentError("P", f"{list(self.P)} has 1 distinct point; transitions need at least 2")

    def check_memory(self) -> None:
        """Refuse, in one line with the estimate, a sweep whose models would not fit in memory."""
        import os

        from emergence.base.limits import check_memory, copy_sweep_bytes

        parallel = 1 if self.workers == 1 or self.device == "cuda" else min(self.workers or os.cpu_count() or 1, len(self.P))
        parallel = min(parallel * self.points_per_model(self.device), len(self.P))
        runs = self.seeds * 2 * (self.chains if self.optimizer == "sgld" else 1)
        check_memory(copy_sweep_bytes(self.L, self.V, list(self.P), runs, parallel,
                                      dtype_bytes=8 if self.dtype == "float64" else 4),
                     f"validate copy-head at L={self.L}, V={self.V}, P up to {max(self.P)} with {runs} models per "
                     f"point on {parallel} worker(s)", "use a smaller --P-grid, --V, --L, --seeds or --workers")

    def points_per_model(self, device: str | None) -> int:
        """How many sweep points train as one batched model on ``device`` (see ``batch_points``)."""
        if self.batch_points is not None:
            return max(1, self.batch_points)
        return len(self.P) if device == "cuda" else 1

    def theory_grid(self, measured=()):
        """The theory's grid: :data:`THEORY_POINTS` log-spaced points from P_min/2 to 2 P_max, and the ``measured`` points."""
        import numpy as np

        return np.union1d(np.geomspace(min(self.P) / 2, max(self.P) * 2, THEORY_POINTS), np.asarray(measured, dtype=float))


def _token_process(name: str, value) -> str:
    """The token process text in canonical form (``iid``, ``markov:rho=R``, ``zipf:alpha=A``, ``corpus:PATH``); one-line
    error otherwise."""
    from emergence.base.errors import EmergenceError, InvalidArgumentError
    from emergence.numerics.copy_head.token_process import TokenProcess

    try:
        return TokenProcess.parse(str(value)).label()
    except EmergenceError as error:
        raise InvalidArgumentError(name, str(error)) from None


def _check_token_statistics(tokens: str, L: int, V: int) -> None:
    """A corpus process's statistics at this window and V, computed now (cached): one-line error for too little text."""
    from emergence.numerics.copy_head.token_process import TokenProcess

    process = TokenProcess.parse(tokens)
    if process.kind == "corpus":
        process.joints(L, V)


def grid_around_prediction(attention: str, L: int, V: int, convention: str = "", points: int | None = None,
                           tokens: str = "iid") -> list[int]:
    r"""The grid the verdict asks for, built around the theory's own transitions at this convention.

    Softmax: ``points`` (default :data:`~emergence.validation.copy_task.analysis.GRID_POINTS`) whole
    numbers of sequences log-spaced over :math:`[P^*/3, 3P^*]` around the predicted :math:`P^*`, or around the
    predicted onset where the copy head switches on continuously (no :math:`P^*`).  Linear:
    ``points`` (default :data:`~emergence.validation.copy_task.analysis.LINEAR_POINTS`) over each of
    :math:`[P_1/2, 2P_1]` and :math:`[P_G/2, 2P_G]` (:func:`~emergence.validation.copy_task.analysis.linear_grid`).

    Fails (:class:`~emergence.base.errors.EmergenceError`) where the theory has no such transition.
    """
    import numpy as np

    from emergence.base.errors import EmergenceError
    from emergence.validation.copy_task.analysis import (GRID_POINTS, LINEAR_POINTS, VERDICT_TRANSITIONS, grid_around,
                                                         linear_grid, verdict_kind)
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.predictions import predicted_phase_diagram

    parsed = CopyTaskConvention.parse(convention, attention=attention)
    predicted = predicted_phase_diagram(attention, L, V, parsed, np.geomspace(1.0, 1e7, THEORY_POINTS), tokens)
    transitions = predicted["transitions"]
    names = VERDICT_TRANSITIONS[verdict_kind(attention, predicted)]  # the transitions the verdict will compare
    lacking = [name for name in names if transitions.get(name) is None]
    if lacking:
        raise EmergenceError(f"the theory has no {' and no '.join(lacking)} at L={L}, V={V} "
                             f"({convention or 'default convention'}): no grid around it to build")
    if attention == "softmax":
        return grid_around(transitions[names[0]], points or GRID_POINTS)
    return linear_grid(transitions["P1"], transitions["crossover"], points or LINEAR_POINTS)


def run_copy_sweep(config: CopyExperiment) -> dict[str, Any]:
    """Train (Adam) or sample (SGLD) every point of ``config``; the fields of a
    :class:`~emergence.records.CopyHeadValidation` (:func:`emergence.api.run_copy_experiment` makes the record)."""
    from emergence.base.arguments import shown
    from emergence.base.errors import EmergenceError, InvalidArgumentError

    if not isinstance(config, CopyExperiment):
        raise InvalidArgumentError("config", f"must be a CopyExperiment, got {shown(config)}")
    config = config.checked()

    import bisect
    import json

    from emergence.base.io import provenance, to_json_text
    from emergence.validation.copy_task.analysis import agreement, measured_curves, next_bisection
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.experiment import point_config, point_cost, sweep_work
    from emergence.validation.copy_task.predictions import predicted_phase_diagram
    from emergence.base.runtime import resolve_device
    from emergence.base.executors import sweep_executor
    from emergence.base.sweeps import run_sweep, sweep_folder

    config.check()
    device = resolve_device(config.device)
    convention = CopyTaskConvention.parse(config.convention, attention=config.attention)
    grid = sorted(int(P) for P in config.P)
    settings = {key: getattr(config, key) for key in
                ("adam_steps", "adam_lr", "sgld_burn_in", "sgld_draws", "sgld_thin", "chains", "dtype", "objective",
                 "tokens")}

    def point_at(P: int) -> dict:
        return point_config(config.attention, config.optimizer, config.L, config.V, P, config.seeds, convention,
                            seed=config.seed, **settings)

    points = [point_at(P) for P in grid]
    executor = sweep_executor(config.executor, config.workers, device)
    out = sweep_folder(config.out, "emergence-copy-head-")
    work = sweep_work(device, config.points_per_model(device))
    results = run_sweep(work, points, out, executor=executor,
                        progress=config.progress, description=f"copy-head {config.attention} {config.optimizer}",
                        cost=point_cost)
    measured = measured_curves(config.attention, config.optimizer, grid, results)

    def prediction() -> tuple[dict | None, str | None]:
        try:
            return predicted_phase_diagram(config.attention, config.L, config.V, convention,
                                           config.theory_grid(grid), config.tokens), None
        except EmergenceError as error:
            return None, str(error)

    predicted, note = prediction()
    added = []
    for _ in range(config.bisections):
        P = next_bisection(config.attention, measured, predicted, grid)
        if P is None:
            break
        result = run_sweep(work, [point_at(P)], out, executor=executor, progress=config.progress,
                           description=f"copy-head bisection P = {P}")[0]
        index = bisect.bisect(grid, P)
        grid.insert(index, P)
        results.insert(index, result)
        added.append(P)
        measured = measured_curves(config.attention, config.optimizer, grid, results)
    measured["bisection"] = {"requested": config.bisections, "added_P": added}
    if added:
        predicted, note = prediction()
    return dict(
        attention=config.attention, L=config.L, V=config.V, P=grid, optimizer=config.optimizer,
        settings={k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()
                  if k not in ("out", "progress", "workers", "executor", "batch_points")
                  and not (k == "tokens" and v == "iid")},
        predicted=predicted, measured=measured, agreement=agreement(config.attention, measured, predicted),
        prediction_note=note, results_folder=config.out,
        provenance=provenance(json.loads(to_json_text(points[0])) | {"P_grid": grid, "device": device}, config.seed),
    )
