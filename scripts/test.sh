#!/usr/bin/env bash
# The whole test suite, as CI runs it (`.ci/run` calls exactly this):
#
#   1. `swift format lint --strict` and a debug build of every target with warnings treated as errors; then the
#      Apple-only code (Combine, Security, CryptoKit branches) type-checked against stand-ins (PlatformCheck/);
#   2. unit and integration tests against real local servers (scripts/servers.sh starts httpbin and an
#      OpenID Connect provider on 127.0.0.1 and stops them afterwards);
#   3. the packages beside the product, each a package of its own (SIDE_PACKAGES: the AsyncHTTPClient transport,
#      the OpenAPI transport, the observability integrations): linted (generated code excluded), built with their
#      own targets' warnings as errors (their Package.swift says so), their tests run against the same local servers;
#      then the integrations demo and the benchmarks, linted and built;
#   4. the DocC catalogs of the product and of the packages beside it, built with warnings as errors so that every
#      symbol link resolves;
#   5. the product's suite and the side packages' again, built with ThreadSanitizer, with
#      TSAN_OPTIONS=halt_on_error=1 so that any race report aborts the run; and the suites that wait on flows,
#      queues and resets again, three times beside two CPU-bound processes (the load check);
#   6. each libFuzzer target of Fuzz/ for a short, fixed time (scripts/fuzz.sh, built with AddressSanitizer).
#
# Exits non-zero on any failed test, any formatting or compiler warning, any ThreadSanitizer report, a server that
# does not start, a run in which no test executed, a suite that hangs (naming the tests that did not finish), or any
# fuzzing finding (a crash, a failed oracle, a leak, a timeout or a sanitizer report). HTTP_REQUIRE_SERVERS=1 makes a
# missing server a test failure rather than a skip.
#
# Options (environment): SKIP_TSAN=1 skips step 5 and SKIP_FUZZ=1 step 6, for a quick local run; CI sets neither.
# LOAD_CHECK_ROUNDS (default 3) is how many times the load check runs; TEST_PARALLELISM (default 8) how many tests
# run at once.
# FUZZ_SECONDS (default 20) is how long each fuzz target runs, two at a time.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"
export HTTP_REQUIRE_SERVERS=1
# A suite takes a few minutes at most; one that runs for this long hangs, and fails instead of waiting for CI's limit.
SUITE_TIMEOUT=${SUITE_TIMEOUT:-900}
# Swift Testing starts every test of a run at once unless told otherwise; on two cores, with the stress tests each
# starting thousands of tasks, tasks then wait so long for a cooperative thread that tests waiting for a state give
# up (CHANGELOG has the measurement). At most this many tests run at once (the runner's
# SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH; Swift 6.3.1). TEST_PARALLELISM changes it.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${TEST_PARALLELISM:-8}
# Plain output: the logs are searched for the runner's symbols.
export NO_COLOR=1
LOG_DIR=$ROOT/.build/test-logs
mkdir -p "$LOG_DIR"

step() { printf '\n==> %s\n' "$*"; }
fail() { printf '\ntest.sh: FAILED: %s\n' "$*" >&2; exit 1; }

command -v swift >/dev/null || fail "swift is not on PATH"

# Checks a test log: the runner must have executed tests and reported no failure.
check_log() {
  local log=$1 label=$2
  if grep -q "ThreadSanitizer" "$log"; then
    grep -m 20 -A 12 "WARNING: ThreadSanitizer" "$log" >&2 || true
    fail "$label: ThreadSanitizer reported a problem (see $log)"
  fi
  local summary
  summary=$(grep -E "Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)" "$log" | tail -n 1 || true)
  [ -n "$summary" ] || fail "$label: no Swift Testing summary in the output (see $log)"
  if grep -qE "Test run with 0 tests" <<<"$summary"; then fail "$label: no test ran"; fi
  grep -q "passed" <<<"$summary" || fail "$label: $summary"
  printf '%s: %s\n' "$label" "$summary"
}

run_suite() {
  local label=$1; shift
  local log=$LOG_DIR/$label.log
  step "$label"
  set +e
  # Through a pseudo-terminal (script), so that the runner writes its output line by line rather than in blocks:
  # when a suite hangs, the log says exactly which tests started and did not finish. script's stdin is /dev/null:
  # with none at all it runs nothing and exits 0 (check_log would then fail the run: no summary).
  OIDC_TOKEN_LIFETIME=2 scripts/servers.sh run -- \
    script -qfec "$(printf '%q ' timeout -k 15 "$SUITE_TIMEOUT" swift test --skip-build "$@")" /dev/null </dev/null 2>&1 \
    | sed -u 's/\r$//' | tee "$log" \
    | grep -E "^(✘|✔ Test run|ThreadSanitizer|servers.sh)|recorded an issue|WARNING: ThreadSanitizer|Fatal error"
  local status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    fail "$label: swift test did not finish within ${SUITE_TIMEOUT}s (a hang); started, not finished: $(unfinished_tests "$log")"
  fi
  check_log "$log" "$label"
  [ "$status" -eq 0 ] || fail "$label: swift test exited with status $status (see $log)"
}

# The tests a log shows starting and not finishing (a parameterized test finishes once, after all its cases).
unfinished_tests() {
  comm -23 \
    <(grep -oE "◇ Test [A-Za-z0-9_]+\([^)]*\) started" "$1" | sed 's/^◇ Test //; s/ started$//' | sort -u) \
    <(grep -oE "Test [A-Za-z0-9_]+\([^)]*\)( with [0-9]+ test cases?)? (passed|failed)" "$1" \
      | sed -E 's/^Test //; s/( with [0-9]+ test cases?)? (passed|failed)$//' | sort -u) \
    | tr '\n' ' '
}

step "install the local servers (pinned, into .build/servers-venv)"
scripts/servers.sh install

step "swift format lint --strict (.swift-format)"
swift format lint --strict --recursive Sources Tests || fail "formatting: run 'swift format format -i -r Sources Tests'"

step "debug build, warnings as errors"
swift build --build-tests -Xswiftc -warnings-as-errors

step "apple-only code type-checks"
# PlatformCheck/ compiles the product's sources with stand-ins for Combine (OpenCombine), Security and CryptoKit, so
# that the branches only Apple platforms build are type-checked here too (PlatformCheck/README.md). Nothing runs.
platform_start=$SECONDS
swift build --package-path PlatformCheck --build-tests >"$LOG_DIR/platform-check.log" 2>&1 || {
  grep -E "error:" -A 4 "$LOG_DIR/platform-check.log" | head -n 80 >&2
  fail "the Apple-only code does not type-check (above; full log: $LOG_DIR/platform-check.log; PlatformCheck/README.md)"
}
# The Combine tests also run there, against OpenCombine (the Security and CryptoKit stand-ins trap, so nothing else).
swift test --package-path PlatformCheck --skip-build --filter ConnectionCombineTests >"$LOG_DIR/platform-check-combine.log" 2>&1 \
  || { tail -n 40 "$LOG_DIR/platform-check-combine.log" >&2; fail "the Combine tests failed against OpenCombine"; }
check_log "$LOG_DIR/platform-check-combine.log" "Combine tests against OpenCombine"
echo "apple-only code type-checks: $((SECONDS - platform_start)) s"

run_suite unit-and-integration

# The packages beside the product: each has its own Package.swift and dependencies. They share one build folder
# (and one for ThreadSanitizer): they depend on the same packages (swift-nio, AsyncHTTPClient, swift-log, the
# product...), and SwiftPM reuses a module another root package compiled there with the same command line. It
# does remove the checkouts of packages the current root does not use: swift-nio's goes when OpenAPI or Observability
# builds, and the next package that needs it fetches and compiles it again (CHANGELOG, session 22). So the packages
# without swift-nio build first, then those with it; the documentation step documents the transport first.
SIDE_PACKAGES=(Transports/AsyncHTTPClient Integrations/OpenAPI Integrations/Observability)
SIDE_SCRATCH=$ROOT/.build-side
SIDE_SCRATCH_TSAN=$ROOT/.build-side-tsan

# A side package's Swift files to lint: its own, not generated code (Generated/ folders, written by
# swift-openapi-generator and committed) nor build folders.
lint_files() {
  find "$1/Sources" "$1/Tests" -name '*.swift' -not -path '*/Generated/*' -not -path '*/.build*' | sort
  echo "$1/Package.swift"
}

side_package_step() {
  local package=$1 package_start=$SECONDS
  step "$package: lint, build (its targets' warnings are errors) and tests"
  # shellcheck disable=SC2046 # one argument per file; the paths have no spaces
  swift format lint --strict $(lint_files "$package") \
    || fail "formatting: run 'swift format format -i' on the files above ($package)"
  swift build --package-path "$package" --scratch-path "$SIDE_SCRATCH" --build-tests \
    || fail "$package does not build (or has a warning)"
  run_suite "$(basename "$package" | tr '[:upper:]' '[:lower:]')" --package-path "$package" --scratch-path "$SIDE_SCRATCH"
  echo "$package step, build included: $((SECONDS - package_start)) s"
}

# The packages that do not use swift-nio first, then the demo (also without it), then those that do: a root package
# that uses swift-nio after one that does not would fetch and compile it again.
side_package_step Integrations/OpenAPI
side_package_step Integrations/Observability

# The integrations demo (scripts/demo.sh runs it after the product's): a package of its own with no tests, built so
# that a change in the product or an integration cannot break it unnoticed. Its generated client is linked in
# (symbolic links to Integrations/OpenAPI's committed code), so only regular files are linted.
step "Integrations/Demo: lint and build"
demo_start=$SECONDS
# shellcheck disable=SC2046 # one argument per file; the paths have no spaces
swift format lint --strict $(find Integrations/Demo/Sources -name '*.swift' -type f | sort) Integrations/Demo/Package.swift \
  || fail "formatting: run 'swift format format -i' on the files above (Integrations/Demo)"
swift build --package-path Integrations/Demo --scratch-path "$SIDE_SCRATCH" --product IntegrationsDemo \
  || fail "Integrations/Demo does not build"
echo "Integrations/Demo step, build included: $((SECONDS - demo_start)) s"

side_package_step Transports/AsyncHTTPClient

# The benchmarks (Benchmarks/README.md) are measured by hand against DESIGN.md's budgets, never in CI; built here (debug)
# so that a change in the product or an integration cannot break them unnoticed.
step "Benchmarks: lint and build"
bench_start=$SECONDS
# shellcheck disable=SC2046 # one argument per file; the paths have no spaces
swift format lint --strict $(find Benchmarks/Sources -name '*.swift' -type f | sort) Benchmarks/Package.swift \
  || fail "formatting: run 'swift format format -i' on the files above (Benchmarks)"
swift build --package-path Benchmarks --scratch-path "$SIDE_SCRATCH" || fail "Benchmarks does not build"
echo "Benchmarks step, build included: $((SECONDS - bench_start)) s"

step "documentation: every DocC catalog builds without a warning (symbol links resolve)"
docs_start=$SECONDS
# Builds each catalog of the package at $1 (built in the scratch folder $2) with its module's symbol graphs.
# dump-symbol-graph extracts the graphs from the built modules on every run, so incremental builds work. It
# also tries the test-runner modules, which it does not build, and then exits non-zero: what counts is that
# every documented module's graph is there, checked below. Further arguments go to dump-symbol-graph.
check_catalogs() {
  local package=$1 scratch=$2; shift 2
  local log
  log=$LOG_DIR/symbol-graphs-$(basename "$(cd "$package" && pwd)").log
  swift package --package-path "$package" --scratch-path "$scratch" dump-symbol-graph --skip-inherited-docs \
    --minimum-access-level public "$@" >"$log" 2>&1 || true
  local symbols
  symbols=$(dirname "$(swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path)")/symbolgraph
  for catalog in "$package"/Sources/*/*.docc; do
    [ -d "$catalog" ] || continue
    local module graphs
    module=$(basename "$(dirname "$catalog")")
    graphs=$ROOT/.build-docs/graphs-$module
    rm -rf "$graphs" && mkdir -p "$graphs"
    [ -f "$symbols/$module.symbols.json" ] || {
      tail -n 40 "$log" >&2
      fail "documentation: no symbol graph for $module"
    }
    cp "$symbols/$module".symbols.json "$graphs/"
    cp "$symbols/$module"@*.symbols.json "$graphs/" 2>/dev/null || true
    docc convert "$catalog" --additional-symbol-graph-dir "$graphs" --fallback-display-name "$module" \
      --fallback-bundle-identifier "$module" --output-path "$ROOT/.build-docs/$module.doccarchive" \
      --warnings-as-errors >"$LOG_DIR/docc-$module.log" 2>&1 \
      || { cat "$LOG_DIR/docc-$module.log" >&2; fail "documentation: $catalog has warnings"; }
    echo "$catalog: no warnings"
  done
}
check_catalogs . "$ROOT/.build-docs"
for package in "${SIDE_PACKAGES[@]}"; do
  # Extension block symbols: a side package documents what it adds to the product's types (HTTPRequest's options).
  check_catalogs "$package" "$SIDE_SCRATCH" --emit-extension-block-symbols
done
echo "documentation step: $((SECONDS - docs_start)) s"

if [ "${SKIP_TSAN:-0}" != "1" ]; then
  step "ThreadSanitizer build, warnings as errors"
  swift build --build-tests --sanitize=thread --scratch-path .build-tsan -Xswiftc -warnings-as-errors
  TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" run_suite thread-sanitizer --sanitize=thread --scratch-path .build-tsan

  # Tests that pass on an idle machine and fail on a busy one are how hangs and starved tasks hid before: the
  # suites that wait on flows, queues and resets run again under ThreadSanitizer, beside two CPU-bound processes
  # (as many as the cores here), several times. LOAD_CHECK_ROUNDS=0 skips it.
  load_rounds=${LOAD_CHECK_ROUNDS:-3}
  if [ "$load_rounds" -gt 0 ]; then
    step "load check: the OAuth, BasicAuth, credential-loader, Throttle and reset suites, ${load_rounds} times beside two CPU-bound processes"
    load_start=$SECONDS
    burners=()
    for _ in 1 2; do (while :; do :; done) & burners+=($!); done
    trap 'kill "${burners[@]}" 2>/dev/null || true' EXIT
    for round in $(seq 1 "$load_rounds"); do
      TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" run_suite "load-check-$round" --sanitize=thread \
        --scratch-path .build-tsan --filter 'OAuth|BasicAuth|Credential|Throttle|Reset'
    done
    kill "${burners[@]}" 2>/dev/null || true
    trap - EXIT
    echo "load check: $((SECONDS - load_start)) s"
  fi
  for package in "${SIDE_PACKAGES[@]}"; do
    step "$package under ThreadSanitizer (build included)"
    package_start=$SECONDS
    swift build --package-path "$package" --build-tests --sanitize=thread --scratch-path "$SIDE_SCRATCH_TSAN" \
      || fail "$package does not build with ThreadSanitizer"
    TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" run_suite \
      "$(basename "$package" | tr '[:upper:]' '[:lower:]')-thread-sanitizer" --sanitize=thread \
      --package-path "$package" --scratch-path "$SIDE_SCRATCH_TSAN"
    echo "$package under ThreadSanitizer, build included: $((SECONDS - package_start)) s"
  done
fi

if [ "${SKIP_FUZZ:-0}" != "1" ]; then
  # Last, so that a fuzzing finding never hides the result of a step above. Two targets at a time on two cores.
  step "fuzzing: each libFuzzer target for ${FUZZ_SECONDS:-20} s (scripts/fuzz.sh; Fuzz/README.md)"
  fuzz_start=$SECONDS
  scripts/fuzz.sh --seconds "${FUZZ_SECONDS:-20}" --jobs 2 \
    || fail "fuzzing found a problem (above; reproduce it with scripts/fuzz.sh --reproducer TARGET FILE)"
  echo "fuzzing step, build included: $((SECONDS - fuzz_start)) s"
fi

step "all green"
