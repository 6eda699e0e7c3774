#!/usr/bin/env bash
# The GPU faults of issue 17, part 4, for the GPU machine (the development machine has no GPU;
# there every part prints SKIPPED and the script exits 0):
#   oom        HLOC_GPU_MEMORY_LIMIT=64M: a module needing 512 MiB fails with exit 1 and an error
#              naming the bytes asked and free; a small one then runs and matches the evaluator;
#              the fraction form; in one process, a failed load then a smaller run, twice
#              (hloc_backend_tests "[faults][gpu]") and the "oom" self-test
#   cache      a corrupt autotune cache (truncated, garbage, empty, another version, a flipped
#              byte): a warning naming the file and the problem, the run still matches, and the
#              file is rebuilt whole (the next run reads it without a warning)
#   interrupt  SIGINT / SIGTERM while autotuning 48 GEMMs with a fresh cache: status 130 / 143, the
#              message, no temporary left, and the cache is absent or whole
# Usage, on the GPU machine from the checkout: bash tests/gpu/faults/run.sh HLOC [PART ...]
# (HLOC_BACKEND_TESTS: the hloc_backend_tests binary, default next to HLOC under tests/).
# Prints PASS/FAIL/SKIPPED per check; exit 1 when any fails.
set -u
H=${1:?usage: run.sh HLOC [PART ...]}
shift
PARTS=${*:-oom cache interrupt}
BT=${HLOC_BACKEND_TESTS:-$(dirname "$H")/tests/hloc_backend_tests}
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fail=1; }

# No GPU: every part skips, with the reason.
cat > "$T/tiny.hlo" <<'HLO'
HloModule tiny
ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p)
}
HLO
if ! "$H" run --profile h200 --seed 1 "$T/tiny.hlo" > /dev/null 2> "$T/err"; then
  if grep -q "no usable GPU\|cannot load the CUDA driver\|no CUDA device" "$T/err"; then
    echo "SKIPPED (no GPU): $(head -1 "$T/err")"
    exit 0
  fi
  bad "a 4-element module does not run on the GPU: $(head -1 "$T/err")"
  exit 1
fi

# out = p + 1 on f32[N]: N*4 bytes in and N*4 out.
add_one() {
  cat <<HLO
HloModule add_one_$1
ENTRY %e (p: f32[$1]) -> f32[$1] {
  %p = f32[$1]{0} parameter(0)
  %one = f32[] constant(1)
  %b = f32[$1]{0} broadcast(%one), dimensions={}
  ROOT %a = f32[$1]{0} add(%p, %b)
}
HLO
}

# $1 module: runs on the GPU, outputs checked against the evaluator; extra args to hloc run after.
matches() {
  local m=$1; shift
  "$H" eval --seed 3 "$m" --outputs "$m.ref.npz" > /dev/null 2>&1 || return 1
  local line
  line=$("$@" --seed 3 "$m" --expect "$m.ref.npz" 2> "$m.stderr" | tail -1)
  # "[FILE: ]N of M outputs match" (hloc run names the module first)
  [[ "$line" =~ (^|:\ )([0-9]+)\ of\ ([0-9]+)\ outputs\ match$ ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ]
}

oom_part() {
  add_one 134217728 > "$T/big.hlo"   # 512 MiB in, 512 MiB out
  add_one 4096 > "$T/small.hlo"
  HLOC_GPU_MEMORY_LIMIT=64M "$H" run --profile h200 --seed 1 "$T/big.hlo" > /dev/null 2> "$T/oom.err"
  local rc=$?
  if [ $rc -eq 1 ] && grep -q "cannot allocate" "$T/oom.err" && grep -q "bytes) asked" "$T/oom.err" &&
     grep -q "free on the device" "$T/oom.err" && grep -q "HLOC_GPU_MEMORY_LIMIT=64M" "$T/oom.err"; then
    pass "oom: 512 MiB under a 64 MiB cap: exit 1: $(head -c 300 "$T/oom.err")"
  else
    bad "oom: exit $rc (expected 1 with the bytes asked and free): $(head -c 600 "$T/oom.err")"
  fi
  if HLOC_GPU_MEMORY_LIMIT=64M matches "$T/small.hlo" "$H" run --profile h200; then
    pass "oom: a 32 KiB module under the same cap runs and matches"
  else
    bad "oom: the small module under the cap: $(head -c 400 "$T/small.hlo.stderr")"
  fi
  HLOC_GPU_MEMORY_LIMIT=0.001 "$H" run --profile h200 --seed 1 "$T/big.hlo" > /dev/null 2> "$T/oom2.err"
  rc=$?
  if [ $rc -eq 1 ] && grep -q "cannot allocate" "$T/oom2.err"; then
    pass "oom: HLOC_GPU_MEMORY_LIMIT=0.001 (a fraction): exit 1"
  else
    bad "oom: fraction cap: exit $rc: $(head -c 400 "$T/oom2.err")"
  fi
  HLOC_GPU_MEMORY_LIMIT=lots "$H" run --profile h200 --seed 1 "$T/small.hlo" > /dev/null 2> "$T/oom3.err"
  rc=$?
  if [ $rc -eq 1 ] && grep -q "HLOC_GPU_MEMORY_LIMIT='lots'" "$T/oom3.err"; then
    pass "oom: a bad HLOC_GPU_MEMORY_LIMIT is named"
  else
    bad "oom: HLOC_GPU_MEMORY_LIMIT=lots: exit $rc: $(head -c 400 "$T/oom3.err")"
  fi
  if [ -x "$BT" ]; then
    if HLOC_GPU_MEMORY_LIMIT=64M timeout 300 "$BT" "[faults][gpu]" -s > "$T/bt.log" 2>&1 &&
       ! grep -q SKIPPED "$T/bt.log"; then
      pass "oom: one process: failed load, then a smaller run, twice ($BT [faults][gpu])"
    else
      bad "oom: $BT [faults][gpu]: $(grep -E 'FAILED|SKIPPED|error' "$T/bt.log" | head -5)"
    fi
    if timeout 300 "$BT" "gpu runtime: out of memory, then a normal run" > "$T/bt2.log" 2>&1; then
      pass "oom: the 'oom' self-test (twice the device's memory, then a normal run)"
    else
      bad "oom: the 'oom' self-test: $(grep -E 'FAILED|error' "$T/bt2.log" | head -5)"
    fi
  else
    echo "SKIPPED oom: one-process checks: no $BT (build hloc_backend_tests, or set HLOC_BACKEND_TESTS)"
  fi
}

# 48 GEMMs of distinct shapes: autotuning takes a while and fills the cache.
gemms() {
  python3 - "$@" <<'PY'
import sys
n = int(sys.argv[1])
params, lines, outs = [], [], []
for i in range(n):
    m, k, c = 128 + 32 * i, 256 + 16 * (i % 5), 64 + 16 * (i % 7)
    params.append("a%d: f32[%d,%d], b%d: f32[%d,%d]" % (i, m, k, i, k, c))
    lines.append("  %%a%d = f32[%d,%d]{1,0} parameter(%d)" % (i, m, k, 2 * i))
    lines.append("  %%b%d = f32[%d,%d]{1,0} parameter(%d)" % (i, k, c, 2 * i + 1))
    lines.append("  %%d%d = f32[%d,%d]{1,0} dot(%%a%d, %%b%d), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
                 % (i, m, c, i, i))
    outs.append(("f32[%d,%d]" % (m, c), "%%d%d" % i))
print("HloModule gemms_%d\n\nENTRY %%e (%s) -> (%s) {" % (n, ", ".join(params), ", ".join(t for t, _ in outs)))
print("\n".join(lines))
print("  ROOT %%t = (%s) tuple(%s)\n}" % (", ".join(t for t, _ in outs), ", ".join(v for _, v in outs)))
PY
}

cache_warning() { grep "hloc: warning: autotune cache" "$1" | head -1; }

cache_part() {
  gemms 6 > "$T/g6.hlo"
  local c="$T/cache/autotune.txt"
  mkdir -p "$T/cache"
  if matches "$T/g6.hlo" "$H" run --profile h200 --autotune-cache "$c" && [ -s "$c" ] &&
     tail -1 "$c" | grep -q "^hloc-autotune-end"; then
    pass "cache: written, ending with its end line ($(grep -c '^hloc-autotune-v1' "$c") entries)"
  else
    bad "cache: the first run: $(head -c 400 "$T/g6.hlo.stderr")"; return
  fi
  cp "$c" "$T/good.txt"
  local size; size=$(stat -c %s "$T/good.txt")
  head -c $((size / 2)) "$T/good.txt" > "$T/damaged.truncated"
  head -c 3000 /dev/urandom > "$T/damaged.garbage"
  : > "$T/damaged.empty"
  sed 's/^hloc-autotune-v1/hloc-autotune-v9/' "$T/good.txt" > "$T/damaged.version"
  python3 -c "import sys; d=bytearray(open(sys.argv[1],'rb').read()); d[len(d)//3]^=4; open(sys.argv[2],'wb').write(d)" \
    "$T/good.txt" "$T/damaged.flipped"
  for kind in truncated garbage empty version flipped; do
    cp "$T/damaged.$kind" "$c"
    if ! matches "$T/g6.hlo" "$H" run --profile h200 --autotune-cache "$c"; then
      bad "cache $kind: the run failed: $(head -c 400 "$T/g6.hlo.stderr")"; continue
    fi
    local w; w=$(cache_warning "$T/g6.hlo.stderr")
    if [ -z "$w" ] || [[ "$w" != *"$c"* ]]; then bad "cache $kind: no warning naming the file"; continue; fi
    if ! matches "$T/g6.hlo" "$H" run --profile h200 --autotune-cache "$c" || [ -n "$(cache_warning "$T/g6.hlo.stderr")" ]; then
      bad "cache $kind: not rebuilt whole: $(cache_warning "$T/g6.hlo.stderr")"; continue
    fi
    pass "cache $kind: run matches, rebuilt; warning: ${w#hloc: warning: }"
  done
  if ls -A "$T/cache" | grep -q tmp; then bad "cache: temporaries left: $(ls -A "$T/cache")"; else pass "cache: no temporary left"; fi
}

interrupt_part() {
  gemms 48 > "$T/g48.hlo"
  local sig
  for sig in INT TERM; do
    local d="$T/int_$sig"
    mkdir -p "$d"
    local start; start=$(date +%s.%N)
    # --verbose prints a line per autotuning candidate: the signal comes after the first one.
    ( set -m; "$H" run --profile h200 --verbose --seed 1 --autotune-cache "$d/autotune.txt" "$T/g48.hlo" \
        > /dev/null 2> "$d/err" &
      pid=$!
      for _ in $(seq 1200); do grep -q "gpu: autotuning gemm" "$d/err" && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
      start=$(date +%s.%N); echo "$start" > "$d/start"
      kill -$sig $pid; wait $pid; echo $? > "$d/rc" )
    start=$(cat "$d/start")
    local rc; rc=$(cat "$d/rc")
    local want=130; [ $sig = TERM ] && want=143
    local took; took=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
    if [ "$rc" = 0 ]; then
      bad "interrupt $sig: the run finished before autotuning was seen: $(tail -c 300 "$d/err")"; continue
    fi
    if [ "$rc" != $want ] || ! grep -q "hloc: \(interrupted\|terminated\)" "$d/err"; then
      bad "interrupt $sig: status $rc (expected $want) or no message: $(tail -c 300 "$d/err")"; continue
    fi
    if ls -A "$d" | grep -q tmp; then bad "interrupt $sig: temporary left: $(ls -A "$d")"; continue; fi
    if [ -e "$d/autotune.txt" ]; then
      gemms 6 > "$d/g6.hlo"
      if ! matches "$d/g6.hlo" "$H" run --profile h200 --autotune-cache "$d/autotune.txt" ||
         [ -n "$(cache_warning "$d/g6.hlo.stderr")" ]; then
        bad "interrupt $sig: the cache left behind is damaged: $(cache_warning "$d/g6.hlo.stderr")"; continue
      fi
    fi
    grep -q "gpu: autotuning gemm" "$d/err" || bad "interrupt $sig: the signal came before autotuning started"
    pass "interrupt $sig: status $rc ${took}s after the signal, '$(grep -o 'hloc: \(interrupted\|terminated\).*' "$d/err" | head -1)', cache $( [ -e "$d/autotune.txt" ] && echo whole || echo absent)"
  done
}

for p in $PARTS; do
  case $p in
    oom) oom_part ;;
    cache) cache_part ;;
    interrupt) interrupt_part ;;
    *) bad "unknown part $p" ;;
  esac
done
exit $fail
