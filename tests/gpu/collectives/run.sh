#!/usr/bin/env bash
# The one-rank NCCL checks, for the GPU machine: each module below runs every collective (and
# its async pair) on the GPU through NCCL's one-rank communicator and must match the evaluator;
# a module for more devices than the machine has GPUs must fail with a clear error before any
# work. The simplifiers that would remove one-device collectives are switched off.
# Usage: tests/gpu/collectives/run.sh [HLOC]        (exit 1 when a check fails)
set -u
H="${1:-build/hloc}"
D="$(cd "$(dirname "$0")" && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail=0
for m in all_reduce gather_scatter permute; do
  if ! "$H" eval "$D/$m.hlo" --seed 1 --outputs "$T/$m.ref.npz" > /dev/null; then
    echo "FAIL $m: the evaluator failed"; fail=1; continue
  fi
  out="$("$H" run --backend gpu "$D/$m.hlo" --seed 1 --disable-passes all-reduce-simp,all-gather-simp \
          --expect "$T/$m.ref.npz" --verbose 2>&1)"
  rc=$?
  echo "$out" | grep -E "gpu: collectives:|outputs match|error" | sed "s/^/  $m: /"
  if ! echo "$out" | grep -q "gpu: collectives: NCCL"; then echo "FAIL $m: did not run through NCCL"; fail=1; fi
  if [ "$rc" != 0 ]; then echo "FAIL $m: exit $rc"; fail=1; else echo "PASS $m"; fi
done
# The same modules with their collectives captured into CUDA graphs (the COLLECTIVES kind).
for m in all_reduce gather_scatter permute; do
  "$H" eval "$D/$m.hlo" --seed 3 --outputs "$T/$m.ref3.npz" > /dev/null || { echo "FAIL $m: eval"; fail=1; continue; }
  if ! "$H" compile "$D/$m.hlo" --profile h100 --disable-passes all-reduce-simp,all-gather-simp \
        --command-buffers FUSION,CUBLAS,COPY,MEMSET,COLLECTIVES -o "$T/$m.hlox"; then
    echo "FAIL $m: compile with COLLECTIVES"; fail=1; continue
  fi
  # --bench: a command buffer is captured at its second call (the first runs plainly).
  out="$("$H" run --backend gpu "$T/$m.hlox" --seed 3 --expect "$T/$m.ref3.npz" --verbose --bench 2 --batches 1 2>&1)"
  rc=$?
  echo "$out" | grep -E "command buffers:|outputs match|error" | sed "s/^/  $m graphs: /"
  if ! echo "$out" | grep -qE "command buffers: on, [1-9][0-9]* captured"; then
    echo "FAIL $m: no collective command buffer was captured"; fail=1
  elif [ "$rc" != 0 ]; then echo "FAIL $m graphs: exit $rc"; fail=1; else echo "PASS $m in CUDA graphs"; fi
done
out="$("$H" run --backend gpu "$D/two_devices.hlo" --seed 1 2>&1)"
rc=$?
echo "$out" | sed 's/^/  two_devices: /'
if [ "$rc" = 1 ] && echo "$out" | grep -q "runs over 2 devices but this machine has 1 GPU"; then
  echo "PASS two_devices (clear error)"
else
  echo "FAIL two_devices: exit $rc"; fail=1
fi
exit $fail
