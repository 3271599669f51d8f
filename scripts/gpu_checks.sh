#!/usr/bin/env bash
# The one prepared GPU run, sized for 8 minutes on one H200 with its install.
#
# Usage: scripts/gpu_checks.sh [OUT_DIR]   (default: gpu-out; run from the repository root).
# Environment: PYTHON (default python3), WHEELS (a folder of wheels to install first, offline; default .whl
# where it exists), SITE (where they go, default /tmp/site), ARCHIVE (a .tar.gz of OUT_DIR, rewritten after
# every part: one file to bring back, e.g. $OUT/gpu-out.tar.gz on the device machine). Not run in CI. How to run it on a machine
# without network, and what it measured: benchmarks/RESULTS.md ("GPU").
#
# The GPU parts come first, each under its own time limit (`timeout`; the limits below add up to
# 458 s, plus 2 s of grace each), so a short lease still brings back the parts that matter most. After
# every part OUT_DIR/summary.json is rewritten (name, limit, seconds, exit status, timed out) beside
# that part's own JSON and log (OUT_DIR/NAME.log; hardware.log: date, GPU, driver, cores, torch, CuPy);
# a part that fails or runs out of time is recorded and the next runs.
#   install     the carried wheels (pip --no-index), when WHEELS holds any
#   gpu_tests   the `gpu`-marked tests (only the files that hold some: fewer imports, no optional packages)
#   posterior_gradient_gpu
#               one batched gradient of the umbrella sampler's potential at L = 16, 24, 32 (32 runs), autograd
#               on cuda in float64 and float32 against the compiled loops on one CPU core, with its fraction of
#               the GPU's measured copy bandwidth (`bench --only posterior_gradient_gpu`)
#   {softmax,linear}_L128, basis_gpu, {softmax,linear}_L256
#               copy-head validations (Adam, readout-marginal action, float32 on cuda; every point of a
#               grid trains as one batched model there, run_copy_points) and the basis statistics on CuPy
#               (`bench --only basis_statistics_gpu`: CuPy vs NumPy at V = 3000 and CuPy alone at V = 50 000)
#   posterior_L32   the umbrella profile at L = 32 (CPU worker processes; few windows and draws)
#   posterior_study_L24
#               one point of the P*(L) size study at L = 24 (`validate posterior --study L=24` with its own
#               `--size-settings`: P = 1000, 1300 around the theory's P* 1181; CPU worker processes; few
#               windows and draws)
set -uo pipefail
out="${1:-gpu-out}"
python=${PYTHON:-python3}
wheels=${WHEELS:-.whl}
site=${SITE:-/tmp/site}
archive=${ARCHIVE:-}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
started=$(date -u +"%Y-%m-%dT%H:%M:%SZ")
: > "$out/parts.jsonl"

summarise() {  # OUT/summary.json from the parts so far (written to a temporary name, then renamed)
  {
    printf '{"started": "%s", "parts": [\n' "$started"
    paste -sd, "$out/parts.jsonl"
    printf ']}\n'
  } > "$out/summary.json.tmp" && mv "$out/summary.json.tmp" "$out/summary.json"
  if [ -n "$archive" ]; then
    tar czf "$archive.tmp" -C "$(dirname "$out")" "$(basename "$out")" && mv "$archive.tmp" "$archive"
  fi
}

part() {  # part NAME LIMIT_S COMMAND...: run it under `timeout`, log to OUT/NAME.log, record it
  local name=$1 limit=$2 start status milliseconds timed_out=false
  shift 2
  start=$(date +%s%N)
  timeout --kill-after=2 "$limit" bash -c '"$@"' "$name" "$@" > "$out/$name.log" 2>&1
  status=$?
  milliseconds=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then timed_out=true; fi
  printf '{"part": "%s", "limit_s": %s, "seconds": %d.%03d, "exit": %s, "timed_out": %s, "log": "%s.log"}\n' \
    "$name" "$limit" $((milliseconds / 1000)) $((milliseconds % 1000)) "$status" "$timed_out" "$name" >> "$out/parts.jsonl"
  summarise
  echo "$name: exit $status after $((milliseconds / 1000)) s (limit $limit s)"
}

hardware() {
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nproc
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  "$python" -c "import cupy; print('cupy', cupy.__version__)"
}

install() {  # the carried wheels, offline, into SITE (ahead of the image's packages)
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheels"/*.whl
}

copy_head() {  # copy_head NAME ATTENTION L P_GRID STEPS: one validation, its JSON and plot in OUT
  "$python" -m emergence validate copy-head --attention "$2" --optimizer adam --objective marginal \
    --L "$3" --V 8 --P-grid "$4" --seeds 1 --steps "$5" --bisect 0 --device cuda --dtype float32 \
    --out "$out/runs/$1" --json "$out/$1.json" --plot "$out/$1.png"
}

export out python wheels site
export -f hardware install copy_head  # parts run under `timeout`, in a child bash
part hardware 10 hardware
if compgen -G "$wheels/*.whl" > /dev/null; then
  part install 35 install
  export PYTHONPATH="$site:$PYTHONPATH"
fi
# GPU parts, most wanted first.  Grids around the theory (V = 8): the softmax saddle's P* is 5895 at L = 128 and
# 14234 at L = 256; the linear P1 about 103, its crossover 4760 and 13195.  Sized before the batched sweep was
# measured on a GPU (a point alone: about 10 ms per Adam step on an H200), so few points and steps.  At L = 256 model T's
# (P, L, L) design is estimated at 127 GiB for P = 15 500: the budget is raised to the GPU's memory there.
part gpu_tests 55 "$python" -m pytest -q -p no:cacheprovider --continue-on-collection-errors -m gpu \
  $(grep -l "pytest.mark.gpu" tests/*.py)
part posterior_gradient_gpu 45 "$python" -m emergence bench --quick --only posterior_gradient_gpu --json "$out/posterior_gradient_gpu.json"
part softmax_L128 50 copy_head softmax_L128 softmax 128 geom:2000:18000:4 800
part linear_L128 50 copy_head linear_L128 linear 128 geom:32:16384:5 800
part basis_gpu 60 "$python" -m emergence bench --quick --only basis_statistics_gpu --json "$out/basis_gpu.json"
part softmax_L256 50 env EMERGENCE_MEMORY_BUDGET=130GiB bash -c 'copy_head softmax_L256 softmax 256 8000,11000,15500 500'
part linear_L256 40 env EMERGENCE_MEMORY_BUDGET=130GiB bash -c 'copy_head linear_L256 linear 256 32,250,2000,15500 500'
# CPU part: the size study at L = 24 around its theory's P* (1181), its grid and sampler set per size, worker
# processes on every core (the limit is sized, not measured on the device; each point's seconds are in runs/)
part posterior_study_L24 35 "$python" -m emergence validate posterior --attention softmax --V 4 --study L=24 \
  --extensions 0 --theory-draws 1000 --out "$out/runs/posterior_study_L24" --json "$out/posterior_study_L24.json" \
  --size-settings 24:P-grid=1000:1300,windows=range:0.05:0.65:0.15,chains=2,warmup=10,draws=20,leapfrog=6
# CPU part: the posterior profile at L = 32 around its theory's P* (1744), worker processes on every core
part posterior_L32 28 "$python" -m emergence validate posterior --attention softmax --method umbrella \
  --L 32 --V 4 --P-grid 1500,2200 --windows 0.05,0.2,0.35,0.5,0.65 --chains 2 --warmup 10 --draws 20 \
  --leapfrog 6 --theory-draws 1000 --out "$out/runs/posterior_L32" --json "$out/posterior_L32.json"
