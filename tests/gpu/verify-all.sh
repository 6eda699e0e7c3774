#!/usr/bin/env bash
# Every GPU-only check in one lease, for the GPU machine (device time is scarce: one call runs
# them all, each under its own time limit, logs under $OUT/verify). Parts:
#   reliability  tests/gpu/reliability/run.sh (issue-35 fixes against the evaluator)
#   collectives  tests/gpu/collectives/run.sh (one-rank NCCL, CUDA-graph captured collectives)
#   complex      tests/gpu/complex/*.hlo (cuBLASLt complex GEMMs, c64 reduce) against the evaluator
#   topk         the split top-k of few long rows (tests/lit/gpu-sort/Inputs/topk_split.hlo), exact
#   linalg       scripts/gpu-check --small on tests/corpus/linalg (cuSOLVER calls against JAX)
#   candidates   `hloc run --verbose` on a large GEMM module: one line per autotuning candidate
#   faults       tests/gpu/faults/run.sh (memory cap, damaged autotune cache, interrupts; the
#                backend-test part needs build/tests/hloc_backend_tests and fails without it)
#   wave1/wave2  scripts/gpu-check --small on both public waves
#   depthwise    tests/gpu/depthwise/run.sh: depthwise convolutions on cuDNN against hloc's loop
#                kernel (conv-rewriter depthwise_to_cudnn: false), XLA's sweep time beside
#   jax          tests/python/jax_gpu_check.py: hloc.jax.jit beside jax.jit on five programs, through
#                libhloc.so from .carry/pylib.tar.xz (scripts/build-python-carry; carry it too)
# Usage: tests/gpu/verify-all.sh HLOC [PART ...]     (default: every part)
# Prints a PASS/FAIL line per part; exit 1 when any fails.
set -u
H=${1:?usage: verify-all.sh HLOC [PART ...]}
shift
PARTS=${*:-reliability collectives complex topk linalg candidates faults wave1 wave2 depthwise jax}
O="${OUT:-/tmp}/verify"
mkdir -p "$O"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
fail=0

complex_part() {
  local T; T=$(mktemp -d)
  local rc=0
  for m in ${MODULES:-tests/gpu/complex/*.hlo}; do
    local n; n=$(basename "$m" .hlo)
    "$H" eval --seed 2 "$m" --outputs "$T/$n.npz" > /dev/null || { echo "$n: eval failed"; rc=1; continue; }
    local line; line=$("$H" run --profile h200 --seed 2 "$m" --expect "$T/$n.npz" ${TOL:+--tol $TOL} 2>&1 | tail -1)
    echo "$n: $line"
    # "[FILE: ]N of M outputs match" (hloc run names the module first)
    [[ "$line" =~ (^|:\ )([0-9]+)\ of\ ([0-9]+)\ outputs\ match$ ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ] || rc=1
  done
  rm -rf "$T"
  return $rc
}

candidates_part() {
  local m=tests/corpus/mlp_fwd_f32.large.before_optimizations.txt
  "$H" run --profile h200 --verbose --bench 3 "$m" 2>&1 | tee "$O/candidates.full" |
    grep -iE "candidate|autotun" | head -40
  grep -qi "candidate" "$O/candidates.full"
}

run_part() {
  local p=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$O/$p.log" 2>&1
  local rc=$?
  local verdict=PASS
  [ $rc = 0 ] || { verdict=FAIL; fail=1; }
  [ $rc = 124 ] && verdict="FAIL (timed out after ${limit}s)"
  echo "== $verdict $p ($((SECONDS - t0)) s)"
  tail -25 "$O/$p.log"
}

export -f complex_part candidates_part
export H O
for p in $PARTS; do
  case $p in
    reliability) run_part $p 150 bash tests/gpu/reliability/run.sh "$H" ;;
    collectives) run_part $p 120 bash tests/gpu/collectives/run.sh "$H" ;;
    complex) run_part $p 60 bash -c complex_part ;;
    topk) run_part $p 90 env MODULES="tests/lit/gpu-sort/Inputs/topk_split.hlo tests/lit/gpu-sort/Inputs/topk_large_k.hlo" TOL=0 bash -c complex_part ;;
    linalg) run_part $p 150 env OUT="$O/linalg" scripts/gpu-check --hloc "$H" --small --corpus tests/corpus/linalg ;;
    candidates) run_part $p 90 bash -c candidates_part ;;
    faults) run_part $p 150 bash tests/gpu/faults/run.sh "$H" ;;
    wave1) run_part $p 200 env OUT="$O/wave1" scripts/gpu-check --hloc "$H" --small ;;
    wave2) run_part $p 200 env OUT="$O/wave2" scripts/gpu-check --hloc "$H" --small --corpus tests/corpus/public2 ;;
    depthwise) run_part $p 300 bash tests/gpu/depthwise/run.sh "$H" ;;
    jax) run_part $p 300 bash -c 'P=$(mktemp -d) && tar xJf .carry/pylib.tar.xz -C "$P" &&
           HLOC_LIBRARY="$P/libhloc.so" LD_LIBRARY_PATH="$P:$LD_LIBRARY_PATH" PYTHONPATH=python \
           python3 tests/python/jax_gpu_check.py --batches 5 --calls 10' ;;
    *) echo "verify-all: unknown part '$p'" >&2; fail=1 ;;
  esac
done
exit $fail
