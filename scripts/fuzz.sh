#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of the Fuzz/ package (see Fuzz/README.md):
#
#   request     request building and validation: every settable part, HTTPRequest(url:), ServerEnvironment
#   headers     HTTPHeaders operations against a model, HTTPResponse header reads, Redaction of fields
#   retryafter  RetryAfter.parse / httpDate / delay(in:now:), Backoff's delays and decisions
#   token       IDTokenClaims(jwt:) and validate, OAuthCredentials(tokenResponse:…), expiry, lifetime, Codable
#   curl        cURLCommand quoting and redaction, PrintLoader lines
#
# Usage:
#   scripts/fuzz.sh [--seconds N] [--jobs N] [TARGET…]   build, then fuzz each target (all by default) for N seconds
#   scripts/fuzz.sh --build                           only build
#   scripts/fuzz.sh --regressions [TARGET…]           replay every input under Fuzz/Crashers/TARGET/, one by one
#   scripts/fuzz.sh --reproducer TARGET FILE…         print the Swift statements an input makes the target run
#   scripts/fuzz.sh --minimize TARGET FILE            shrink a crashing input (written next to it as FILE.min)
#   scripts/fuzz.sh --seeds [TARGET…]                 rewrite Fuzz/Corpus/TARGET/ from the seeds in the targets' code
#
# Options for fuzzing:
#   --seconds N     how long each target runs (default 600; scripts/test.sh uses 20)
#   --jobs N        how many targets run at once (default 1)
#   --skip-known    step around the traps already saved under Fuzz/Crashers/ (FUZZ_SKIP_KNOWN=1), to find new ones
#   --merge         afterwards, merge what the run found into the committed corpus (libFuzzer -merge=1: only
#                   inputs that add coverage are kept)
#   -- ARGS         more libFuzzer options, e.g. -- -seed=1 -use_value_profile=1
#
# Each run fuzzes a working corpus in Fuzz/.build/corpus/TARGET (kept between runs; corpus-skip-known/ with
# --skip-known) seeded by Fuzz/Corpus/TARGET, which it never writes to. Findings (crash-*, leak-*, timeout-*,
# oom-*) go to Fuzz/.build/artifacts/TARGET/, logs to Fuzz/.build/logs/. Exits non-zero on any crash, oracle failure, leak, timeout, out-of-memory or sanitizer report,
# and prints the executions per target.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
FUZZ=$ROOT/Fuzz
BUILD=$FUZZ/.build
ALL_TARGETS=(request headers retryafter token curl)

# The Swift runtime's own crash handler (swift-backtrace) would otherwise take over a trapping target and can keep
# it alive long after libFuzzer has reported the crash; libFuzzer and AddressSanitizer print the stack themselves.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"

seconds=600
jobs=1
mode=fuzz
merge=0
targets=()
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build) mode=build; shift ;;
    --regressions) mode=regressions; shift ;;
    --reproducer) mode=reproducer; shift; break ;;
    --minimize) mode=minimize; shift; break ;;
    --seeds) mode=seeds; shift ;;
    --skip-known) export FUZZ_SKIP_KNOWN=1; shift ;;
    --merge) merge=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

fail() { printf 'fuzz.sh: %s\n' "$*" >&2; exit 1; }

# The executable of a target: request → FuzzRequest, retryafter → FuzzRetryAfter, curl → FuzzCURL.
executable() {
  case $1 in
    request) echo FuzzRequest ;; headers) echo FuzzHeaders ;; retryafter) echo FuzzRetryAfter ;;
    token) echo FuzzToken ;; curl) echo FuzzCURL ;;
    *) fail "unknown target '$1' (targets: ${ALL_TARGETS[*]})" ;;
  esac
}

build() {
  echo "==> building the fuzz targets (release, -sanitize=fuzzer,address)"
  local start=$SECONDS
  # -sanitize=fuzzer,address reaches every Swift module, the product's included, so its code is instrumented for
  # coverage and checked by AddressSanitizer. One product at a time: a plain `swift build` would also link the
  # product's Demo executable, which cannot link with libFuzzer. gold warns once per link that it cannot export a
  # symbol of AddressSanitizer's; that warning is harmless and filtered out.
  local target
  for target in "${ALL_TARGETS[@]}"; do
    swift build -c release --package-path "$FUZZ" -Xswiftc -sanitize=fuzzer,address --product "$(executable "$target")" \
      2>&1 | grep -v "Cannot export local symbol '__asan_extra_spill_area'" || fail "building $target failed"
  done
  BIN=$(swift build -c release --package-path "$FUZZ" --show-bin-path)
  echo "built in $((SECONDS - start)) s"
}

bin_path() {
  BIN=${BIN:-$(swift build -c release --package-path "$FUZZ" --show-bin-path)}
  local path
  path=$BIN/$(executable "$1")
  [ -x "$path" ] || fail "$path is missing: run scripts/fuzz.sh --build first"
  echo "$path"
}

# Whether a log shows any finding, beyond the exit status: a sanitizer or oracle report, a Swift runtime error.
log_has_finding() {
  grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|ORACLE FAILED|runtime error:|Fatal error:|SUMMARY: " "$1"
}

# Fuzzes one target for $seconds; prints one summary line; returns non-zero on any finding.
fuzz_one() {
  local target=$1 binary corpus=$BUILD/corpus$CORPUS_SUFFIX/$1 artifacts=$BUILD/artifacts/$1 log=$BUILD/logs/$1.log
  binary=$(bin_path "$target")
  mkdir -p "$corpus" "$artifacts" "$BUILD/logs"
  local dict=() status=0
  [ -f "$FUZZ/Dictionaries/$target.dict" ] && dict=(-dict="$FUZZ/Dictionaries/$target.dict")
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "${dict[@]}" "${extra[@]}" "$corpus" "$FUZZ/Corpus/$target" >"$log" 2>&1 || status=$?
  local runs coverage corpus_size seed
  seed=$(grep -m 1 -oE "INFO: Seed: [0-9]+" "$log" | grep -oE "[0-9]+$" || true)
  runs=$(grep -oE "stat::number_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$" || true)
  [ -n "$runs" ] || runs=$(grep -oE "^#[0-9]+" "$log" | tail -n 1 | tr -d '#' || true)
  coverage=$(grep -oE "cov: [0-9]+" "$log" | tail -n 1 | grep -oE "[0-9]+" || true)
  corpus_size=$(find "$corpus" -type f | wc -l)
  local rate=""
  [ -n "$runs" ] && [ "$seconds" -gt 0 ] && rate=" ($((runs / seconds))/s)"
  if [ "$status" -ne 0 ] || log_has_finding "$log"; then
    printf '%-10s FAILED after %s executions, coverage %s, seed %s; exit status %s\n' "$target" "${runs:-?}" \
      "${coverage:-?}" "${seed:-?}" "$status"
    echo "    $(describe_finding "$log")"
    grep -E "Test unit written to" "$log" | sed 's/^.*Test unit written to /    input: /'
    echo "    log: $log; as Swift: scripts/fuzz.sh --reproducer $target <input>; saved crashers: Fuzz/Crashers/README.md"
    return 1
  fi
  printf '%-10s ok: %s executions in %s s%s, coverage %s, working corpus %s inputs, seed %s\n' "$target" \
    "${runs:-?}" "$seconds" "$rate" "${coverage:-?}" "$corpus_size" "${seed:-?}"
  if [ "$merge" = 1 ]; then
    "$binary" -merge=1 -timeout=10 "$FUZZ/Corpus/$target" "$corpus" >"$BUILD/logs/$target-merge.log" 2>&1 \
      || fail "merging $target's corpus failed (see $BUILD/logs/$target-merge.log)"
    echo "           merged into Fuzz/Corpus/$target ($(find "$FUZZ/Corpus/$target" -type f | wc -l) inputs)"
  fi
}

# One line saying what a log reports and where: the oracle's message, or the trap and the first frame in the product.
describe_finding() {
  local log=$1 reason where
  reason=$(grep -m 1 -oE "ORACLE FAILED \([^)]*\): .*|Fatal error: .*|Swift runtime failure: [^/]*[^ /]|ERROR: libFuzzer: timeout|ERROR: LeakSanitizer: .*|ERROR: AddressSanitizer: [a-z-]+|ERROR: libFuzzer: out-of-memory" "$log" || true)
  # An oracle's message says it all; a trap is located by the first frame in the product.
  case $reason in "ORACLE FAILED"*) echo "$reason"; return ;; esac
  where=$(grep -E "^ +#[0-9]+ " "$log" | grep -v "Fuzz/Sources" | grep -m 1 -oE "/Sources/[A-Za-z]+/[^ :]+\.swift:[0-9]+" | sed 's|^/||' || true)
  if [ -z "$where" ]; then
    # Inlined into the harness: name the product's function instead (modules HTTP, HTTPAuth, HTTPConnection).
    where=$(grep -m 1 -oE ' in \$s(4HTTP|8HTTPAuth|14HTTPConnection)[A-Za-z0-9_]+' "$log" | sed 's/^ in //' \
      | swift demangle --simplified 2>/dev/null || true)
  fi
  echo "${reason:-see the log}${where:+ (at $where)}"
}

# Replays each saved crasher of a target on its own; prints which still fail.
regressions_one() {
  local target=$1 binary failed=0 file
  binary=$(bin_path "$target")
  [ -d "$FUZZ/Crashers/$target" ] || return 0
  for file in "$FUZZ/Crashers/$target"/*; do
    [ -f "$file" ] || continue
    if "$binary" -timeout=10 "$file" >"$BUILD/logs/regression.log" 2>&1 && ! log_has_finding "$BUILD/logs/regression.log"; then
      printf '  fixed       %s/%s\n' "$target" "$(basename "$file")"
    else
      printf '  still fails %s/%s: %s\n' "$target" "$(basename "$file")" "$(describe_finding "$BUILD/logs/regression.log")"
      failed=1
    fi
  done
  return $failed
}

[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
# A run that steps around known traps keeps a working corpus of its own: its inputs may reach those traps, and a
# normal run (test.sh's) must not start from them, nor may they be merged into the committed corpus.
CORPUS_SUFFIX=""
if [ "${FUZZ_SKIP_KNOWN:-0}" = 1 ]; then
  CORPUS_SUFFIX=-skip-known
  [ "$merge" = 0 ] || fail "--merge cannot be used with --skip-known: those inputs may reach the known traps"
fi
mkdir -p "$BUILD/logs"

case $mode in
  build)
    build
    ;;
  reproducer)
    [ $# -ge 2 ] || fail "usage: scripts/fuzz.sh --reproducer TARGET FILE…"
    binary=$(bin_path "$1"); shift
    "$binary" --reproducer "$@"
    ;;
  minimize)
    [ $# -eq 2 ] || fail "usage: scripts/fuzz.sh --minimize TARGET FILE"
    binary=$(bin_path "$1")
    "$binary" -minimize_crash=1 -runs=20000 -timeout=10 -exact_artifact_path="$2.min" "$2" 2>&1 | tail -n 3
    "$binary" --reproducer "$2.min"
    ;;
  seeds)
    build
    for target in "${targets[@]}"; do
      rm -rf "${FUZZ:?}/Corpus/$target"
      "$(bin_path "$target")" --write-seeds "$FUZZ/Corpus/$target"
    done
    ;;
  regressions)
    build
    echo "==> replaying Fuzz/Crashers/"
    status=0
    for target in "${targets[@]}"; do regressions_one "$target" || status=1; done
    [ $status -eq 0 ] && echo "every saved crasher passes: move them into Fuzz/Corpus/ with their guards removed"
    exit $status
    ;;
  fuzz)
    build
    echo "==> fuzzing ${targets[*]} for $seconds s each, $jobs at a time${FUZZ_SKIP_KNOWN:+, stepping around known traps}"
    start=$SECONDS
    status=0
    pids=()
    results=()
    for target in "${targets[@]}"; do
      fuzz_one "$target" >"$BUILD/logs/$target.summary" 2>&1 &
      pids+=($!)
      results+=("$target")
      if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
      fi
    done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    for target in "${results[@]}"; do cat "$BUILD/logs/$target.summary"; done
    echo "fuzzing took $((SECONDS - start)) s"
    exit $status
    ;;
esac
