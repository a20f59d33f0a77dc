#!/usr/bin/env bash
# A probe, not a suite: does the natural program's many-small ratio depend on what ran before it
# in the same process, or on how many hardware queues the driver gives the process's streams?
#
#   bash benches/probe-order.sh BUNDLE_DIR [ROUNDS]      (default: 3 rounds; needs nvcc, python3)
#
# BENCHMARKS.md (2026-12-07): many-small run in a process of its own gave the natural program
# 1.07-1.23x the best C++ (16 runs, three H100s), while both suites, where it follows three
# other configurations in one process, gave 1.06. Each round runs, for the driver's default
# number of connections and for CUDA_DEVICE_MAX_CONNECTIONS=32 (on both sides):
#   seed.cu many-small                       the best C++ of any kind, graphs included
#   bench_seed many-small                    the natural program alone in its process
#   bench_seed balanced many-small           the natural program after another configuration
# and prints natural / best C++ for each. The CSVs go to $OUT (or BUNDLE_DIR/logs) as
# probe-order.tgz.
set -u
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: bash benches/probe-order.sh BUNDLE_DIR [ROUNDS]"; exit 2
fi
bundle="$(cd "$1" && pwd)"
rounds="${2:-3}"
out="${OUT:-$bundle/logs}"
work="$(mktemp -d /tmp/sluice-probe.XXXXXX)"
mkdir -p "$out" "$work/csv"
cseed="$work/sluice-cuda-seed"
if ! nvcc -O3 -arch="${SLUICE_BENCH_ARCH:-sm_90}" -std=c++17 -o "$cseed" "$bundle/benches/cuda/seed.cu" >"$work/nvcc.log" 2>&1; then
  echo "nvcc failed:"; cat "$work/nvcc.log"; exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1
for r in $(seq 1 "$rounds"); do
  for conns in default 32; do
    env=(); [ "$conns" = default ] || env=(CUDA_DEVICE_MAX_CONNECTIONS="$conns")
    tag="r$r-$conns"
    env ${env[@]+"${env[@]}"} timeout 90 "$cseed" many-small >"$work/csv/$tag-cpp.csv" 2>>"$work/stderr.log" || echo "$tag: seed.cu failed"
    env ${env[@]+"${env[@]}"} timeout 90 "$bundle/bin/bench_seed" many-small >"$work/csv/$tag-alone.csv" 2>>"$work/stderr.log" || echo "$tag: bench_seed alone failed"
    env ${env[@]+"${env[@]}"} timeout 120 "$bundle/bin/bench_seed" balanced many-small >"$work/csv/$tag-after.csv" 2>>"$work/stderr.log" || echo "$tag: bench_seed after balanced failed"
  done
done
tar czf "$out/probe-order.tgz" -C "$work" csv stderr.log
python3 - "$work/csv" "$rounds" "$bundle/benches" <<'PY'
import os, sys
d, rounds = sys.argv[1], int(sys.argv[2])
sys.dont_write_bytecode = True  # leave no __pycache__ in the bundle
sys.path.insert(0, sys.argv[3])
from join import CPP_NOT_A_PROGRAM as not_programs  # parts of the overlap bound, not programs
def rows(name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return []
    return [l.split(",") for l in open(path) if l.startswith(("cuda,", "rust,"))]
print(f"{'round':5}  {'connections':11}  {'best C++':18}  {'ms':>7}  {'alone ms':>8}  {'ratio':>5}  {'after balanced ms':>17}  {'ratio':>5}")
for r in range(1, rounds + 1):
    for conns in ("default", "32"):
        tag = f"r{r}-{conns}"
        cpp = [(float(p[6]), p[1]) for p in rows(f"{tag}-cpp.csv") if p[2] == "many-small" and p[1] not in not_programs]
        nat = {}
        for side in ("alone", "after"):
            for p in rows(f"{tag}-{side}.csv"):
                if p[2] == "many-small" and p[1] == "natural":
                    nat[side] = float(p[6])
        if not cpp or len(nat) < 2:
            print(f"{r:5}  {conns:11}  missing rows")
            continue
        best, which = min(cpp)
        print(f"{r:5}  {conns:11}  {which:18}  {best:7.4f}  {nat['alone']:8.4f}  {nat['alone'] / best:5.3f}  {nat['after']:17.4f}  {nat['after'] / best:5.3f}")
PY
