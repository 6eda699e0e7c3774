#!/usr/bin/env bash
# device run 1: radix checks, per-thunk logs of public2
set -u
xz -dkf .carry/hloc.xz && chmod +x .carry/hloc
H=$PWD/.carry/hloc; export LD_LIBRARY_PATH=/usr/local/cuda/lib64
S=$OUT/s; mkdir -p $S
for f in tests/lit/gpu-sort/Inputs/sort_radix.hlo tests/lit/gpu-sort/Inputs/sort_long.hlo; do
  n=$(basename $f .hlo); $H eval $f --seed 5 --outputs /tmp/$n.npz > /dev/null 2>&1
  timeout 120 $H run $f --backend gpu --seed 5 --expect /tmp/$n.npz 2>&1 | tail -1
done
OUT=$S/chk timeout 100 scripts/gpu-check --hloc $H --small --corpus tests/corpus/public2 --only top_p 2>&1 | tail -2
timeout 300 scripts/bench gpu --hloc $H --corpus tests/corpus/public2 --results results.json --out $S/p2 --logs $S/logs2 --timeout 100 2>&1 | grep -E 'geometric|slowest|modules run'
grep -E "^\| (top_p|numpyro|flax_gru|eqx|embedding|optax)" $S/p2/*.md | cut -c1-250
rm -rf $S/chk/exe
