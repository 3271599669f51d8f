#!/usr/bin/env bash
# The one prepared GPU run (issues 5, 7 and 15), sized for a 10-minute call on one H200:
#   0. issue 15: the compiled basis pair passes and the Dask executor (tests, and a CUDA sweep on Dask);
#   1. benchmarks: basis statistics with CuPy vs NumPy, the batched copy-task sweep and SGLD with torch CUDA;
#   2. validation: a softmax and a linear model-T sweep at L = 128 on the readout-marginal action.
# Usage: scripts/gpu_checks.sh [OUT_DIR]   (default: gpu-out). Not run in CI; not yet run (no GPU lent so far).
# Needs pip install '.[gpu,dev]' (CuPy 14, CUDA 13) and a CUDA build of torch. Writes OUT_DIR/hardware.txt (date,
# GPU, driver, versions, seconds per part), OUT_DIR/bench_*.json and OUT_DIR/{softmax,linear}_L128.{json,png}
# (per-point results under OUT_DIR/runs, resumable), for benchmarks/RESULTS.md and docs/validation_copy_head.md.
set -euo pipefail
out="${1:-gpu-out}"
mkdir -p "$out"
python=${PYTHON:-python}
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  "$python" -c "import cupy; print('cupy', cupy.__version__)"
} > "$out/hardware.txt"
timed() {
  local name=$1; shift
  local start
  start=$(date +%s)
  "$@"
  echo "$name seconds $(( $(date +%s) - start ))" >> "$out/hardware.txt"
}
# issue 15: the compiled (Numba) pair passes against NumPy, and sweeps on a 2-worker Dask LocalCluster
# (the CPU must-show tests, then one small CUDA sweep through Dask workers sharing the one GPU)
timed "compiled basis tests" "$python" -m pytest -q -p no:logging tests/test_compiled_pair_pass.py
timed "dask executor tests" "$python" -m pytest -q -p no:logging tests/test_dask_executor.py
timed "dask sweep cuda" "$python" -m emergence validate copy-head --attention softmax --L 32 --V 8 \
  --P-grid geom:8:1024:4 --seeds 1 --steps 500 --device cuda --executor dask --workers 2 \
  --out "$out/runs/dask_softmax_L32" --json "$out/dask_softmax_L32.json"
for part in basis_statistics training_sweeps sgld; do
  timed "bench $part" "$python" -m emergence bench --only "$part" --json "$out/bench_$part.json"
done
timed "softmax L=128" "$python" -m emergence validate copy-head --attention softmax --optimizer adam --objective marginal \
  --L 128 --V 8 --P-grid geom:512:8192:7 --seeds 1 --steps 2000 --device cuda --dtype float32 \
  --out "$out/runs/softmax_L128" --json "$out/softmax_L128.json" --plot "$out/softmax_L128.png"
timed "linear L=128" "$python" -m emergence validate copy-head --attention linear --optimizer adam --objective marginal \
  --L 128 --V 8 --P-grid geom:16:16384:9 --seeds 1 --steps 2000 --device cuda --dtype float32 \
  --out "$out/runs/linear_L128" --json "$out/linear_L128.json" --plot "$out/linear_L128.png"
