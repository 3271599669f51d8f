#!/usr/bin/env bash
# One prepared GPU run (issue 5): the basis statistics with CuPy and the batched copy-task sweep
# with torch CUDA, side by side with their CPU/loop alternatives, for benchmarks/RESULTS.md.
# Usage: scripts/gpu_benchmarks.sh [OUT_DIR]   (default: gpu-bench). Not run in CI.
# Needs: pip install '.[gpu]' (CuPy 14 for CUDA 13) and a CUDA build of torch.
# Writes OUT_DIR/hardware.txt (date, GPU, driver, torch/CUDA, CuPy) and OUT_DIR/{basis,sweeps}.json.
set -euo pipefail
out="${1:-gpu-bench}"
mkdir -p "$out"
python=${PYTHON:-python}
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'device', torch.cuda.get_device_name(0))"
  "$python" -c "import cupy; print('cupy', cupy.__version__)"
} > "$out/hardware.txt"
"$python" -m emergence bench --only basis_statistics --json "$out/basis.json"
"$python" -m emergence bench --only training_sweeps --json "$out/sweeps.json"
"$python" -m emergence bench --only sgld --json "$out/sgld.json"
