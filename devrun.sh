#!/usr/bin/env bash
# device run 2: checks + both waves timed
set -u
xz -dkf .carry/hloc.xz && chmod +x .carry/hloc
H=$PWD/.carry/hloc; export LD_LIBRARY_PATH=/usr/local/cuda/lib64
S=$OUT/s; mkdir -p $S
for f in tests/lit/gpu-sort/Inputs/sort_radix.hlo tests/lit/gpu-loops/Inputs/loops.hlo tests/lit/algsimp/TransposeOfDot.hlo; do
  n=$(basename $f .hlo); $H eval $f --seed 5 --outputs /tmp/$n.npz > /dev/null 2>&1
  timeout 120 $H run $f --backend gpu --seed 5 --expect /tmp/$n.npz 2>&1 | tail -1
done
M=tests/corpus/public2/eqx_dilated_conv1d.small; $H compile $M.before_optimizations.txt --profile h200 -o /tmp/d.hlox >/dev/null 2>&1
$H run /tmp/d.hlox --backend gpu --inputs $M.inputs.npz --expect $M.outputs.npz 2>&1 | tail -1
M=tests/corpus/public2/flax_resnet_stage_train.small; $H compile $M.before_optimizations.txt --profile h200 -o /tmp/r.hlox >/dev/null 2>&1
$H run /tmp/r.hlox --backend gpu --inputs $M.inputs.npz --expect $M.outputs.npz 2>&1 | grep -v " ok" | tail -3
HLOC_CUDNN_FUSED_GRAPH=0 $H run /tmp/r.hlox --backend gpu --inputs $M.inputs.npz --expect $M.outputs.npz 2>&1 | grep -v " ok" | tail -3
OUT=$S/check_public2 timeout 280 scripts/gpu-check --hloc $H --small --corpus tests/corpus/public2 2>&1 | tail -3
OUT=$S/check_public timeout 200 scripts/gpu-check --hloc $H --small --corpus tests/corpus 2>&1 | tail -3
timeout 300 scripts/bench gpu --hloc $H --corpus tests/corpus/public2 --results results.json --out $S/p2 --logs $S/logs2 --timeout 100 2>&1 | grep -E 'geometric|slowest|modules run'
grep -E "^\| " $S/p2/*.md | cut -d'|' -f2,3,4,5 | head -20
timeout 300 scripts/bench gpu --hloc $H --corpus tests/corpus --results results.json --out $S/p1 --logs $S/logs1 --timeout 100 2>&1 | grep -E 'geometric|slowest|modules run'
rm -rf $S/check_*/exe
cd $OUT && tar czf logs.tgz s && rm -rf s/logs1 s/logs2 s/check_*/logs
