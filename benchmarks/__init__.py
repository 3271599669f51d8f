"""Side-by-side benchmarks: the engine against the alternative a user would otherwise write.

Each module in :data:`BENCHMARK_MODULES` exposes ``run(quick: bool) -> list[dict]``; every
dict is a :func:`emergence.benchmarks.harness.compare` record.  ``emergence bench`` runs them all.
"""

BENCHMARK_MODULES: tuple[str, ...] = (
    "emergence.benchmarks.basis_statistics",
    "emergence.benchmarks.basis_statistics_gpu",
    "emergence.benchmarks.phase_diagram",
    "emergence.benchmarks.scaling",
    "emergence.benchmarks.training_sweeps",
    "emergence.benchmarks.batched_sweep",
    "emergence.benchmarks.sgld",
    "emergence.benchmarks.posterior_gradient",
    "emergence.benchmarks.posterior_gradient_gpu",
    "emergence.benchmarks.token_metrics",
)
