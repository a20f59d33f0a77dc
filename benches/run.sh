#!/usr/bin/env bash
# Every benchmark on a GPU machine, from the bundle `cargo xtask bundle` builds (needs the
# NVIDIA driver, nvcc and python3; no Rust):
#
#   bash benches/run.sh BUNDLE_DIR [all|kernels|seed|graph|launch|ports|multi]      (default: all)
#
#   kernels  the Rust kernels (bin/bench_kernels) against the same algorithms in CUDA C++
#            (cuda/bench.cu, built here with nvcc), CUDA events around each launch;
#   seed     the seed workload over persistent inputs: every hand-written CUDA C++ variant,
#            graphs included (cuda/seed.cu), and sluice's paths (bin/bench_seed: the
#            hand-written schedules, and the README's natural program as a user runs it),
#            interleaved rounds; the streaming example against the bidirectional copy bound
#            (bin/stream_batches); the per-scope cost against a raw-driver loop, and the
#            natural program against raw-driver graphs of the chunked fan-in in one process
#            (bin/bench_scopes); traces of sluice's fastest hand-written path and of the natural
#            program for many-small and copy-bound. The headline table (the natural program
#            against the best C++) is printed last;
#   graph    CUDA graphs captured by hand (seed.cu --only graph) against sluice's recorded
#            graphs (bin/bench_graph), interleaved rounds; 10,000 replays with memory
#            before and after (bench_graph --leak);
#   launch   launch overhead against the raw cuLaunchKernel (bin/bench_launch);
#   ports    the Rust-CUDA (cuda_std) kernels ported to sluice (ports/): `sluice-ports check`
#            (every kernel against its CPU reference), `sluice-ports bench` and the same
#            gemms in CUDA C++ (cuda/gemm.cu, built here with nvcc), interleaved rounds;
#            prints gemm_tiled sluice / CUDA C++ and the cost of vecadd's bounds check;
#   all      everything above but multi (about 4-5 minutes on an H200, nvcc included);
#   multi    several GPUs (not in all: it wants a machine with two): the gpu_multi tests
#            (tests/gpu_multi-*, --ignored: peer copies, cross-device hand-offs and every NCCL
#            collective, exact, on one GPU and on two), then bin/bench_multi (the seed
#            workload on 1 GPU and on all, scaling; peer-copy bandwidth against NVLink's
#            figure; NCCL's all-reduce bus bandwidth). Needs neither nvcc nor python3; NCCL
#            is found as `Communicator::nccl_version` says (LD_LIBRARY_PATH, or PyTorch's
#            pip package under site-packages/nvidia/nccl/lib). Writes multi.csv and
#            multi-tests.log; SLUICE_BENCH_MULTI_ARGS passes flags to bench_multi.
#
# Writes to $OUT (or BUNDLE_DIR/logs): bench.json (every number and sample), bench.md (the
# tables, for BENCHMARKS.md), raw.tar.gz (every CSV, stderr log and the console output), and
# in seed mode trace-{many-small,copy-bound}.{json,svg} (sluice's fastest hand-written path)
# and trace-{many-small,copy-bound}-natural.{json,svg} (the natural program: how it was
# submitted). Prints the tables, the seed summary and the natural program's table last
# (benches/join.py).
#
# Knob for the streaming example: SLUICE_BENCH_STREAM_ARGS (default: 128 batches of 16 MiB,
# 4 slots, 5 repetitions; e.g. "--batch-mib 8 --batches 256").
#
# Knobs: SLUICE_BENCH_ARCH (sm_90), SLUICE_BENCH_ROUNDS (2 interleaved rounds per side),
# SLUICE_BENCH_REPLAYS (10000).
set -u
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: bash benches/run.sh BUNDLE_DIR [all|kernels|seed|graph|launch|ports|multi]"; exit 2
fi
bundle="$(cd "$1" && pwd)"
mode="${2:-all}"
case "$mode" in all|kernels|seed|graph|launch|ports|multi) ;; *) echo "unknown mode '$mode' (all, kernels, seed, graph, launch, ports, multi)"; exit 2 ;; esac
out="${OUT:-$bundle/logs}"
mkdir -p "$out"
work="$(mktemp -d /tmp/sluice-bench.XXXXXX)"
exec > >(tee -a "$work/console.log") 2>&1
arch="${SLUICE_BENCH_ARCH:-sm_90}"
rounds="${SLUICE_BENCH_ROUNDS:-2}"
replays="${SLUICE_BENCH_REPLAYS:-10000}"
bin="$bundle/bin"
src="$bundle/benches"
status=0
t0=$SECONDS
want() { [ "$mode" = all ] || [ "$mode" = "$1" ]; }
step() { echo "== $* (at $((SECONDS - t0)) s)"; }
# run NAME TIMEOUT_S STDOUT_FILE CMD...: appends stdout to the file, stderr to NAME.err.
run() {
  local name="$1" limit="$2" dest="$3"; shift 3
  timeout "$limit" "$@" >>"$dest" 2>>"$work/$name.err"
  local rc=$?
  if [ $rc -ne 0 ]; then
    local why="exit status $rc"
    [ $rc -eq 124 ] && why="timed out after $limit s"
    echo "FAILED ($why): $name: $*"; tail -n 5 "$work/$name.err"; status=1
  fi
  return $rc
}

echo "sluice benchmarks, mode $mode, $(date -u '+%Y-%m-%d %H:%M UTC'), work dir $work"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 >"$work/nvidia-smi.txt"
cat "$work/nvidia-smi.txt"
nvcc --version 2>&1 | tail -n 2 >"$work/nvcc-version.txt"

# The CUDA C++ programs, compiled side by side.
[ "$mode" = multi ] || step "nvcc -O3 -arch=$arch"
cuda_bench="$work/sluice-cuda-bench" cuda_seed="$work/sluice-cuda-seed" cuda_gemm="$work/sluice-cuda-gemm"
pids=()
if want kernels; then
  nvcc -O3 -arch="$arch" -std=c++17 -o "$cuda_bench" "$src/cuda/bench.cu" >"$work/nvcc-bench.log" 2>&1 & pids+=($!)
fi
if want seed || want graph; then
  nvcc -O3 -arch="$arch" -std=c++17 -o "$cuda_seed" "$src/cuda/seed.cu" >"$work/nvcc-seed.log" 2>&1 & pids+=($!)
fi
if want ports; then
  nvcc -O3 -arch="$arch" -std=c++17 -o "$cuda_gemm" "$src/cuda/gemm.cu" >"$work/nvcc-gemm.log" 2>&1 & pids+=($!)
fi
for p in ${pids[@]+"${pids[@]}"}; do wait "$p"; done
for f in "$work"/nvcc-*.log; do
  [ -e "$f" ] || continue
  exe="$cuda_bench"; case "$f" in *seed*) exe="$cuda_seed" ;; *gemm*) exe="$cuda_gemm" ;; esac
  if [ ! -x "$exe" ]; then echo "nvcc failed: $f"; cat "$f"; status=1; fi
done

if want kernels; then
  step kernels
  [ -x "$cuda_bench" ] && run kernels-cuda 180 "$work/kernels-cuda.csv" "$cuda_bench" all
  run kernels-rust 180 "$work/kernels-rust.csv" "$bin/bench_kernels" all
fi

if want seed; then
  for r in $(seq 1 "$rounds"); do
    step "seed, round $r of $rounds"
    # Graphs included: the natural program's peer is the best C++ of any kind.
    [ -x "$cuda_seed" ] && run seed-cuda 300 "$work/seed-cuda.csv" "$cuda_seed" all
    trace=()
    [ "$r" = "$rounds" ] && trace=(--trace many-small --trace copy-bound --trace-dir "$out")
    run seed-rust 300 "$work/seed-rust.csv" "$bin/bench_seed" all ${trace[@]+"${trace[@]}"}
  done
  grep -h 'traced\|natural: submissions' "$work/seed-rust.err" 2>/dev/null
  step "streaming: batches through the GPU against the bidirectional copy bound"
  # shellcheck disable=SC2086
  run stream 300 "$work/stream.csv" "$bin/stream_batches" ${SLUICE_BENCH_STREAM_ARGS:-}
  grep -v '^stream,' "$work/stream.csv"
  step "per-scope cost, 1000 scopes x 3 rounds"
  run scopes 180 "$work/scopes.csv" "$bin/bench_scopes" many-small many-small-128 --scopes 1000 --rounds 3
fi

if want graph; then
  for r in $(seq 1 "$rounds"); do
    step "graph, round $r of $rounds"
    [ -x "$cuda_seed" ] && run graph-cuda 180 "$work/graph-cuda.csv" "$cuda_seed" all --only graph
    run graph-rust 180 "$work/graph-rust.csv" "$bin/bench_graph" all
  done
  step "graph, $replays replays: memory before and after"
  run mem 180 "$work/mem.csv" "$bin/bench_graph" --leak "$replays" many-small
  grep -h 'replays of' "$work/mem.err" 2>/dev/null
fi

if want launch; then
  step launch
  for launches in 20000 2000; do
    run launch 120 "$work/launch.txt" "$bin/bench_launch" "$launches" 9
  done
  # In batches of 100 (a stream synchronized between them): the host's work alone.
  run launch 120 "$work/launch.txt" "$bin/bench_launch" 20000 9 100
  grep -v '^csv-launch' "$work/launch.txt"
fi

if want ports; then
  step "ports: sluice-ports check"
  run ports-check 300 "$work/ports-check.txt" "$bin/sluice-ports" check
  cat "$work/ports-check.txt"
  for r in $(seq 1 "$rounds"); do
    step "ports, round $r of $rounds"
    [ -x "$cuda_gemm" ] && run ports-cuda 240 "$work/ports-cuda.csv" "$cuda_gemm" all
    run ports-rust 240 "$work/ports-rust.csv" "$bin/sluice-ports" bench
  done
fi

if [ "$mode" = multi ]; then
  nvidia-smi -L 2>/dev/null
  nvidia-smi topo -m 2>/dev/null | head -n 12
  step "multi-GPU tests: gpu_multi --ignored"
  tmulti="$(ls "$bundle"/tests/gpu_multi-* 2>/dev/null | head -n 1)"
  if [ -n "$tmulti" ] && [ -x "$tmulti" ]; then
    # The two-GPU tests fail (never pass) with fewer GPUs: skipped, and said so.
    skip=()
    if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ]; then
      skip=(--skip on_two_gpus); echo "one GPU: the on_two_gpus tests are skipped"
    fi
    timeout "${SLUICE_TEST_TIMEOUT:-600}" "$tmulti" --ignored --test-threads=1 --show-output ${skip[@]+"${skip[@]}"} >"$work/multi-tests.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "FAILED: gpu_multi timed out"
    # What each test printed (successes: NCCL, peer paths; failures: the panic), at most 8
    # lines each without backtraces, then one line per test and the result.
    awk '/^---- .* stdout ----$/ { p = 1; n = 0; print; next }
         /^stack backtrace:/ || /^(failures|successes):$/ { p = 0 }
         p && n < 8 && NF { print; n++ }' "$work/multi-tests.log" | head -n 150
    grep -E "^test .* \.\.\. |^test result:" "$work/multi-tests.log"
    [ $rc -ne 0 ] && { echo "FAILED: gpu_multi (exit status $rc)"; status=1; }
    cp "$work/multi-tests.log" "$out/multi-tests.log"
  else
    echo "FAILED: no tests/gpu_multi-* in the bundle"; status=1
  fi
  step "bench_multi ${SLUICE_BENCH_MULTI_ARGS:-}"
  # shellcheck disable=SC2086
  run multi 900 "$work/multi.csv" "$bin/bench_multi" ${SLUICE_BENCH_MULTI_ARGS:-}
  grep -v '^csv-multi' "$work/multi.csv"
  cat "$work/multi.err" 2>/dev/null | grep -v '^$' | tail -n 5
  cp "$work/multi.csv" "$out/multi.csv"
else
  step "join"
  python3 "$src/join.py" --work "$work" --out "$out" --mode "$mode" --sources "$src"/sources/*.rs \
    || { echo "join.py failed"; status=1; }
fi
echo "benchmarks took $((SECONDS - t0)) s; status $status"
tar -czf "$out/raw.tar.gz" -C "$work" . 2>/dev/null || true
exit $status
