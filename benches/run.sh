#!/usr/bin/env bash
# Benchmarks on a GPU machine (needs the NVIDIA driver, nvcc and python3; no Rust):
# - the Rust kernels (bundle/bin/bench_kernels) against the same algorithms in CUDA C++
#   (benches/cuda/bench.cu, built here with nvcc), same sizes, configurations and inputs;
# - the seed workload end to end: sluice (bundle/bin/bench_seed) against hand-written
#   CUDA C++ streams (benches/cuda/seed.cu), and the device-sync version for reference;
# - launch overhead: sluice against the raw cuLaunchKernel (bundle/bin/bench_launch).
# Prints the joined table last; raw CSVs and logs go to $OUT (or BUNDLE_DIR/logs).
#   bash benches/run.sh BUNDLE_DIR        (called by bundle/run.sh bench)
set -u
bundle="$1"
out="${OUT:-$bundle/logs}"
mkdir -p "$out"
arch="${SLUICE_BENCH_ARCH:-sm_90}"
cuda_bin=/tmp/sluice-cuda-bench
if ! nvcc -O3 -arch="$arch" -std=c++17 -o "$cuda_bin" "$bundle/benches/cuda/bench.cu" 2>"$out/nvcc.log"; then
  echo "nvcc failed: see $out/nvcc.log"; cat "$out/nvcc.log"; exit 1
fi
"$cuda_bin" all >"$out/bench-cuda.csv" 2>"$out/bench-cuda.err" || { echo "CUDA C++ bench failed"; cat "$out/bench-cuda.err"; exit 1; }
"$bundle/bin/bench_kernels" all >"$out/bench-rust.csv" 2>"$out/bench-rust.err" || { echo "Rust bench failed"; cat "$out/bench-rust.err"; exit 1; }
# The seed workload end to end: hand-written CUDA C++ streams against sluice's scope.
seed_bin=/tmp/sluice-cuda-seed
nvcc -O3 -arch="$arch" -std=c++17 -o "$seed_bin" "$bundle/benches/cuda/seed.cu" 2>>"$out/nvcc.log" || { echo "nvcc failed on seed.cu"; cat "$out/nvcc.log"; exit 1; }
# Pageable uploads make these end-to-end times noisy: each side runs twice,
# interleaved, and the join keeps each side's best median.
for sizes in "8 262144 512" "64 16384 512"; do
  for round in 1 2; do
    "$seed_bin" $sizes >>"$out/bench-cuda.csv" 2>>"$out/bench-cuda.err" || { echo "seed.cu failed"; cat "$out/bench-cuda.err"; exit 1; }
    "$bundle/bin/bench_seed" $sizes >"$out/seed-rust.csv" 2>>"$out/bench-rust.err" || { echo "bench_seed failed"; cat "$out/bench-rust.err"; exit 1; }
    grep -v '^#' "$out/seed-rust.csv" >>"$out/bench-rust.csv"
  done
done
grep -h 'bench_seed' "$out/bench-rust.err" || true
# Launch overhead: sluice's enqueue cost next to the raw cuLaunchKernel.
for launches in 20000 2000; do
  "$bundle/bin/bench_launch" "$launches" 7 >>"$out/bench-launch.txt" 2>&1 || { echo "bench_launch failed"; cat "$out/bench-launch.txt"; exit 1; }
done
cat "$out/bench-launch.txt"
python3 - "$out/bench-cuda.csv" "$out/bench-rust.csv" <<'PY'
import csv, sys
def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            impl, kernel, sizes, block, grid, med, lo, hi, reps, check = line.strip().split(',')
            row = dict(block=block, grid=grid, med=float(med), check=float(check))
            if (kernel, sizes) not in rows or row['med'] < rows[(kernel, sizes)]['med']:
                rows[(kernel, sizes)] = row
    return rows
cuda, rust = load(sys.argv[1]), load(sys.argv[2])
print(f"{'kernel':<16} {'sizes':<14} {'nvcc ms':>9} {'rust ms':>9} {'rust/nvcc':>9}  {'check':<5} verdict")
worst = 0.0
# The kernels' goal is 1.10x nvcc; the seed rows (whole workloads) are reported beside them.
for key in sorted(cuda):
    c = cuda[key]; r = rust.get(key)
    if r is None:
        print(f"{key[0]:<16} {key[1]:<14} {c['med']:>9.4f} {'-':>9} {'-':>9}  no Rust run"); continue
    ratio = r['med'] / c['med']
    kernel_row = not key[0].startswith('seed')
    if kernel_row:
        worst = max(worst, ratio)
    same = abs(r['check'] - c['check']) <= 1e-3 * max(1.0, abs(c['check']))
    cfg = '' if (r['block'], r['grid']) == (c['block'], c['grid']) else f" (config differs: {r['block']}/{r['grid']} vs {c['block']}/{c['grid']})"
    print(f"{key[0]:<16} {key[1]:<14} {c['med']:>9.4f} {r['med']:>9.4f} {ratio:>9.3f}  {'same' if same else 'DIFF':<5} {('ok' if ratio <= 1.10 else 'over 1.10x') if kernel_row else 'workload'}{cfg}")
print(f"worst kernel ratio {worst:.3f} (goal: every kernel <= 1.10); seed rows: the whole workload, seed_devsync the device-synchronize version")
PY
