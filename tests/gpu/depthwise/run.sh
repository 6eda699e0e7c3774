#!/usr/bin/env bash
# Depthwise convolutions on the GPU machine: cuDNN (conv-rewriter's default) against hloc's own
# loop kernel (conv-rewriter depthwise_to_cudnn: false, gpu.yaml's choice since 2026-12-07), beside XLA's time
# from the conv sweep (docs/bench/sweeps/xla_results_sweep_conv.json, an H100, 2026-12-07).
# The modules are the conv sweep's depthwise cases (tools/corpus/workloads_sweep_conv.py): the
# large ones are timed, the small ones checked against JAX's outputs through the loop kernel.
# Usage: bash tests/gpu/depthwise/run.sh HLOC      (exit 1 when a small check fails)
set -u
H=${1:?usage: run.sh HLOC}
D=tests/gpu/depthwise
P=h200; nvidia-smi -L 2>/dev/null | grep -q H100 && P=h100
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# Both pipelines from gpu.yaml, with the option set each way (whatever gpu.yaml chooses).
for v in true false; do
  sed "s/depthwise_to_cudnn: [a-z]*/depthwise_to_cudnn: $v/" pipelines/gpu.yaml > "$T/gpu_$v.yaml"
  grep -q "depthwise_to_cudnn: $v" "$T/gpu_$v.yaml" || { echo "depthwise: could not set the option"; exit 1; }
done
xla() {
  python3 -c "import json,sys; d=json.load(open('docs/bench/sweeps/xla_results_sweep_conv.json'))['work']
e=d.get(sys.argv[1]+'.large',{}); print('%.1f' % (e['xla_median_s']*1e6) if 'xla_median_s' in e else '-')" "$1"
}
us() { grep -o "median_ms=[0-9.]*" | head -1 | awk -F= '{printf "%.1f", $2 * 1000}'; }
fail=0
printf "%-40s %10s %10s %10s  %s\n" case cudnn_us loop_us xla_us "small (loop)"
for m in $D/*.large.before_optimizations.txt; do
  n=$(basename "$m" .large.before_optimizations.txt)
  a=$(timeout 60 "$H" run "$m" --profile $P --bench 10 --batches 5 --pipeline "$T/gpu_true.yaml" 2>&1 | us)
  b=$(timeout 60 "$H" run "$m" --profile $P --bench 10 --batches 5 --pipeline "$T/gpu_false.yaml" 2>&1 | us)
  c=$(timeout 60 "$H" run $D/$n.small.before_optimizations.txt --profile $P --inputs $D/$n.small.inputs.npz \
        --expect $D/$n.small.outputs.npz --pipeline "$T/gpu_false.yaml" 2>&1 | tail -1)
  printf "%-40s %10s %10s %10s  %s\n" "${n#sweep_conv_}" "${a:-fail}" "${b:-fail}" "$(xla "$n")" "$c"
  [[ "$c" =~ (^|:\ )([0-9]+)\ of\ ([0-9]+)\ outputs\ match$ ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ] || fail=1
done
exit $fail
