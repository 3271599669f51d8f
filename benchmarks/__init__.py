"""Side-by-side benchmarks: the engine against the alternative a user would otherwise write.

Each module in :data:`BENCHMARK_MODULES` exposes ``run(quick: bool) -> list[dict]``; every
dict is a :func:`benchmarks.harness.compare` record.  ``emergence bench`` runs them all.
"""

BENCHMARK_MODULES: tuple[str, ...] = (
    "benchmarks.basis_statistics",
    "benchmarks.phase_diagram",
    "benchmarks.scaling",
    "benchmarks.training_sweeps",
    "benchmarks.sgld",
)
