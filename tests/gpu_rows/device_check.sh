#!/usr/bin/env bash
# Device check of the row-reduction emitter (gpu_reduction_emitter.cc): register-row custom
# tests + corpus smalls with --expect, then the large softmax/layernorm/attention timings.
set -u
xz -dc .carry/gpurows/hloc.xz > /tmp/hloc && chmod +x /tmp/hloc
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
H=/tmp/hloc; C=tests/corpus; T=tests/gpu_rows; W=/tmp/w; mkdir -p $W
python3 $T/make_inputs.py $W
for m in softmax_rows warp_rows layernorm_rows; do
  $H eval $T/$m.hlo --inputs $W/$m.inputs.npz --outputs $W/$m.outputs.npz >/dev/null
  $H compile $T/$m.hlo --profile h200 -o $W/$m.hlox && $H run $W/$m.hlox --backend gpu --inputs $W/$m.inputs.npz --expect $W/$m.outputs.npz 2>&1 | tail -2
done
for m in softmax layernorm_bf16 logsumexp_xent attention_bf16 transformer_block_bf16 reductions; do
  ( $H compile $C/$m.small.before_optimizations.txt --profile h200 -o $W/$m.s.hlox && $H run $W/$m.s.hlox --backend gpu --inputs $C/$m.small.inputs.npz --expect $C/$m.small.outputs.npz 2>&1 | tail -1 ) || echo "FAIL $m"
done
for m in layernorm_bf16 softmax attention_bf16; do
  $H compile $C/$m.large.before_optimizations.txt --profile h200 -o $W/$m.l.hlox && echo "== $m.large" && $H run $W/$m.l.hlox --backend gpu --bench 5 2>&1 | tail -3
done
