#!/usr/bin/env bash
# One op-family sweep on the GPU machine (issue 34, part 2), in one device command:
#   tools/corpus/sweep.sh FAMILY DIR [STAGE...]
# FAMILY: conv, topk_sort, reduce, reduce_window, gather_scatter, dot, loop, linalg
# (tools/corpus/workloads_sweep_FAMILY.py). DIR: the family's corpus folder, e.g. /tmp/sweep_conv; keep it
# outside $OUT: it survives between the commands of one lease, so a later command can run the stages left.
# Stages (default all = gen bench check report):
#   gen     SET=sweep_FAMILY RESUME=1 jax_corpus.py DIR all: HLO modules, small inputs/outputs, XLA's
#           times (DIR/results.json; cases already there are kept, so a cut-short gen goes on), floors.py
#   bench   scripts/bench gpu --corpus DIR over the large modules, in chunks of $CHUNK (default 4) so that
#           a command cut short keeps the chunks it finished and a rerun goes on from there
#   check   scripts/gpu-check --small --corpus DIR: every small module against JAX's outputs
#   report  tools/corpus/sweep_report.py over this family -> $OUT/sweeps_FAMILY.md, and DIR (without
#           executables) tarred to $OUT/sweep_FAMILY.tar.xz
# Written to $OUT (default /tmp/sweep-out): gen_FAMILY.log, xla_results_sweep_FAMILY.json,
# bench_sweep_FAMILY.{json,log}, check_sweep_FAMILY.md, sweeps_FAMILY.md, sweep_FAMILY.tar.xz.
# HLOC: the hloc binary (default .carry/hloc, unpacked from .carry/hloc.xz when missing); PROFILE: the
# profile the bench and gpu-check compile with (default h100 on an H100, else h200; before 2026-12-07's
# third session the bench stage compiled with hloc run's default, h200, on the H100 too); SWEEP_BUDGET: seconds for the whole command
# (default 570, under the 10-minute device limit): each stage gets what is left of it.
set -u
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
FAM="$1"; DIR="$2"; shift 2
STAGES=("$@"); [ ${#STAGES[@]} -eq 0 ] && STAGES=(all)
[ -f "tools/corpus/workloads_sweep_$FAM.py" ] || { echo "sweep: no tools/corpus/workloads_sweep_$FAM.py" >&2; exit 2; }
O="${OUT:-/tmp/sweep-out}"; mkdir -p "$O" "$DIR"
DIR="$(cd "$DIR" && pwd)"
BUDGET="${SWEEP_BUDGET:-570}"
left() { echo $((BUDGET - SECONDS)); }
want() { local s; for s in "${STAGES[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=2
if [ -z "${HLOC:-}" ]; then
  [ -x .carry/hloc ] || { [ -f .carry/hloc.xz ] && xz -dkf .carry/hloc.xz && chmod +x .carry/hloc; }
  HLOC="$PWD/.carry/hloc"
fi
HLOC="$(cd "$(dirname "$HLOC")" && pwd)/$(basename "$HLOC")"
if [ -z "${PROFILE:-}" ]; then
  PROFILE=h200; nvidia-smi -L 2>/dev/null | grep -q H100 && PROFILE=h100
fi
echo "sweep $FAM: DIR=$DIR OUT=$O HLOC=$HLOC profile=$PROFILE stages=${STAGES[*]} budget=${BUDGET}s"

if want gen; then
  # RESUME=1: the cases DIR/results.json already holds are not made again (a gen cut short goes on).
  t=$(( $(left) - 60 ))
  echo "sweep $FAM: gen (limit ${t}s)"
  SET="sweep_$FAM" RESUME=1 timeout "$t" python3 tools/corpus/jax_corpus.py "$DIR" all >> "$O/gen_$FAM.log" 2>&1
  rc=$?
  echo "sweep $FAM: gen exit $rc after ${SECONDS}s: $(grep -c '^sweep_.*\.large {' "$O/gen_$FAM.log") large and" \
       "$(grep -c '^sweep_.*\.small {' "$O/gen_$FAM.log") small modules made, $(grep -c ' ERROR ' "$O/gen_$FAM.log") errors"
  grep ' ERROR ' "$O/gen_$FAM.log" | cut -c1-300
  python3 tools/corpus/floors.py "$DIR" > /dev/null 2>&1
  cp "$DIR/results.json" "$O/xla_results_sweep_$FAM.json" 2>/dev/null
fi

if want bench; then
  mapfile -t NAMES < <(cd "$DIR" && ls *.large.before_optimizations.txt 2>/dev/null | sed 's/\.large\.before_optimizations\.txt$//' | sort)
  CHUNK="${CHUNK:-4}"; mkdir -p "$DIR/bench"
  echo "sweep $FAM: bench ${#NAMES[@]} large modules in chunks of $CHUNK"
  for ((i = 0; i < ${#NAMES[@]}; i += CHUNK)); do
    c="$DIR/bench/chunk$((i / CHUNK))"
    ls "$c"/bench_gpu_*.json > /dev/null 2>&1 && continue   # done by an earlier command
    t=$(( $(left) - 90 )); [ "$t" -lt 30 ] && { echo "sweep $FAM: bench stopped at module $i: budget spent (rerun: $0 $FAM $DIR bench check report)"; break; }
    only=$(IFS=,; echo "${NAMES[*]:i:CHUNK}")
    timeout "$t" python3 scripts/bench gpu --hloc "$HLOC" --corpus "$DIR" --results results.json --only "$only" \
      --timeout 90 --out "$c" -- --profile "$PROFILE" >> "$O/bench_sweep_$FAM.log" 2>&1
    grep -h '^bench gpu: \[' "$O/bench_sweep_$FAM.log" | tail -n "$CHUNK"
  done
  # One json for the family: the chunks' rows together.
  python3 - "$DIR/bench" "$O/bench_sweep_$FAM.json" <<'EOF'
import glob, json, sys
rows, head = [], {}
for p in sorted(glob.glob(sys.argv[1] + "/chunk*/bench_gpu_*.json")):
    d = json.load(open(p)); rows += d.get("rows", []); head = head or d
head["rows"] = rows
json.dump(head, open(sys.argv[2], "w"), indent=1)
print(f"sweep: {len(rows)} modules benched -> {sys.argv[2]}")
EOF
fi

if want check; then
  t=$(( $(left) - 30 ))
  if [ "$t" -lt 20 ]; then
    echo "sweep $FAM: check skipped: budget spent (rerun: $0 $FAM $DIR check report)"
  else
    echo "sweep $FAM: check (limit ${t}s)"
    rm -rf "$DIR/check"
    OUT="$DIR/check" timeout "$t" scripts/gpu-check --hloc "$HLOC" --profile "$PROFILE" --small --corpus "$DIR" 2>&1 | tail -2
    cp "$DIR/check/summary.md" "$O/check_sweep_$FAM.md" 2>/dev/null
    rm -rf "$DIR/check/exe"
  fi
fi

if want report; then
  args=()
  [ -f "$O/bench_sweep_$FAM.json" ] && args+=("$O/bench_sweep_$FAM.json")
  [ -f "$O/check_sweep_$FAM.md" ] && args+=(--check "$O/check_sweep_$FAM.md")
  [ -f "$DIR/results.json" ] && args+=(--results "$DIR/results.json")
  if [ -f "$O/bench_sweep_$FAM.json" ]; then
    python3 tools/corpus/sweep_report.py "${args[@]}" --out "$O/sweeps_$FAM.md" && sed -n '/^| family/,/^$/p' "$O/sweeps_$FAM.md"
  else
    echo "sweep $FAM: no bench json yet: no report"
  fi
  tar cJf "$O/sweep_$FAM.tar.xz" --exclude='./check/exe' -C "$DIR" .
fi
echo "sweep $FAM: done in ${SECONDS}s; $(ls "$O" | wc -l) files in $O"
