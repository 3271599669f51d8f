#!/usr/bin/env bash
# One prepared GPU run (issue 7): a softmax and a linear copy-head sweep at L = 128 with torch CUDA.
# Usage: scripts/gpu_copy_head_sweeps.sh [OUT_DIR]   (default: gpu-out). Not run in CI.
# Writes OUT_DIR/{softmax,linear}_L128.{json,png}, the per-point results (resumable) and
# OUT_DIR/hardware.txt with the date and the GPU, for recording in docs/validation_copy_head.md.
set -euo pipefail
out="${1:-gpu-out}"
mkdir -p "$out"
python=${PYTHON:-python}
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
} > "$out/hardware.txt"
start=$(date +%s)
"$python" -m emergence validate copy-head --attention softmax --optimizer adam --L 128 --V 8 \
  --P-grid geom:128:8192:13 --seeds 4 --steps 3000 --device cuda --dtype float32 \
  --out "$out/softmax_L128" --json "$out/softmax_L128.json" --plot "$out/softmax_L128.png"
echo "softmax seconds $(( $(date +%s) - start ))" >> "$out/hardware.txt"
start=$(date +%s)
"$python" -m emergence validate copy-head --attention linear --optimizer adam --L 128 --V 8 \
  --P-grid geom:16:16384:11 --seeds 2 --steps 3000 --device cuda --dtype float32 \
  --out "$out/linear_L128" --json "$out/linear_L128.json" --plot "$out/linear_L128.png"
echo "linear seconds $(( $(date +%s) - start ))" >> "$out/hardware.txt"
