#!/usr/bin/env bash
# Runs the demo: builds the Demo executable and the integrations demo (Integrations/Demo: a generated OpenAPI client
# over the chain, logged with swift-log and traced with swift-distributed-tracing), starts the local servers
# (httpbin, the OpenID Connect provider, nginx, the HTTPS test servers, the download and event-stream servers;
# scripts/servers.sh installs them on first use), runs both demos against them, then stops the servers.
#
#   scripts/demo.sh                              # the chains end in URLSessionLoader
#   scripts/demo.sh --transport asynchttpclient  # the same demo over AsyncHTTPClientLoader
#                                                # (Transports/AsyncHTTPClient; its first build takes minutes)
#   scripts/demo.sh --no-integrations            # the product's demo only
#
# Nothing sits silent: while a build or the servers' first install runs, a line every 10 s says how long it has run
# and what it is doing (SwiftPM's latest "[n/m] Compiling …" line). Their full output is shown when they fail.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

transport=urlsession
integrations=1
while [ $# -gt 0 ]; do
  case "$1" in
    --transport)
      [ $# -ge 2 ] || { echo "demo.sh: --transport needs urlsession or asynchttpclient" >&2; exit 2; }
      transport=$2
      shift 2
      ;;
    --transport=*) transport=${1#--transport=}; shift ;;
    --no-integrations) integrations=""; shift ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

case "$transport" in
  urlsession) package_args=() product=Demo ;;
  asynchttpclient) package_args=(--package-path Transports/AsyncHTTPClient) product=AsyncHTTPClientDemo ;;
  *) echo "demo.sh: unknown transport '$transport' (urlsession or asynchttpclient)" >&2; exit 2 ;;
esac
integrations_args=(--package-path Integrations/Demo)

logs=$(mktemp -d "${TMPDIR:-/tmp}/demo-sh.XXXXXX")
install_pid=""
build_pid=""
# Background children ignore Ctrl-C (bash starts them so): an interrupted demo.sh stops them itself. (An interrupted
# install leaves no stamp, so the next servers.sh redoes it.)
cleanup() {
  [ -z "$build_pid" ] || kill "$build_pid" 2>/dev/null || true
  [ -z "$install_pid" ] || kill "$install_pid" 2>/dev/null || true
  rm -rf "$logs"
}
trap cleanup EXIT

# What a build is doing: its log's latest "[n/m] …" line (SwiftPM's progress), else its latest line that is not
# indented (resolving, fetching; not a warning's continuation), cut to fit a line.
latest_line() {
  local line
  line=$(tr -d '\r' 2>/dev/null <"$1" | grep -E '^\[[0-9]+/[0-9]+\]' | tail -n 1 || true)
  [ -n "$line" ] || line=$(tr -d '\r' 2>/dev/null <"$1" | grep -E '^[^[:space:]]' | tail -n 1 || true)
  printf '%s\n' "${line:-planning the build}" | cut -c 1-100
}

# The servers' first install (a Python venv from PyPI, and nginx if missing) runs beside the builds; once the venv is
# current, `servers.sh install` returns at once.
echo "Checking the local servers' install (scripts/servers.sh install: the first time, pip installs them)…"
install_started=$SECONDS
scripts/servers.sh install >"$logs/servers-install.log" 2>&1 &
install_pid=$!

# What the servers' install is doing, for the progress lines: empty once it is done.
install_progress() {
  [ -n "$install_pid" ] && kill -0 "$install_pid" 2>/dev/null || return 0
  local packages
  packages=$(find .build/servers-venv -maxdepth 4 -name '*.dist-info' -type d 2>/dev/null | wc -l)
  printf 'servers: installing for %d s (%d Python packages so far)' $((SECONDS - install_started)) "$packages"
}

# Once the servers' install has ended: says so if it installed anything, or fails with its output.
check_install() {
  [ -n "$install_pid" ] && ! kill -0 "$install_pid" 2>/dev/null || return 0
  local status=0
  wait "$install_pid" || status=$?
  install_pid=""
  if [ "$status" -ne 0 ]; then
    cat "$logs/servers-install.log" >&2
    echo "demo.sh: installing the servers failed (scripts/servers.sh install)" >&2
    exit 1
  fi
  if grep -q 'installing' "$logs/servers-install.log"; then
    echo "  The servers are installed ($((SECONDS - install_started)) s)."
  fi
}

# Waits for the servers' install, saying every 10 s how long it has run.
finish_install() {
  local next=$((SECONDS + 10))
  while [ -n "$install_pid" ] && kill -0 "$install_pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$next" ]; then
      echo "  … $(install_progress)"
      next=$((SECONDS + 10))
    fi
    sleep 1
  done
  check_install
}

# `build NAME WHAT ARGS…` builds with `swift build ARGS`, saying every 10 s how long it has run and SwiftPM's latest
# line; on failure, prints the whole output (kept in NAME's log) and exits.
build() {
  local log=$logs/build-$1.log what=$2 started=$SECONDS status=0 next progress
  shift 2
  echo "Building $what…"
  swift build "$@" >"$log" 2>&1 &
  build_pid=$!
  next=$((SECONDS + 10))
  while kill -0 "$build_pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$next" ]; then
      progress=$(install_progress)
      echo "  … $((SECONDS - started)) s: $(latest_line "$log")${progress:+  |  $progress}"
      next=$((SECONDS + 10))
    fi
    sleep 1
    check_install
  done
  wait "$build_pid" || status=$?
  build_pid=""
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "demo.sh: building $what failed" >&2
    exit 1
  fi
  echo "Built $what in $((SECONDS - started)) s."
}

build demo "the demo ($transport)" ${package_args[@]+"${package_args[@]}"} --product "$product"
run=(swift run ${package_args[@]+"${package_args[@]}"} --skip-build "$product")
if [ -n "$integrations" ]; then
  build integrations "the integrations demo (Integrations/Demo)" "${integrations_args[@]}" --product IntegrationsDemo
  run=(bash -c '"$@" && swift run --package-path Integrations/Demo --skip-build IntegrationsDemo' demo "${run[@]}")
fi
finish_install

# The provider issues 2-second access tokens so that the OAuth section shows a refresh without a long wait.
export OIDC_TOKEN_LIFETIME=${OIDC_TOKEN_LIFETIME:-2}
echo "Starting the servers…"
status=0
scripts/servers.sh run -- "${run[@]}" || status=$?
exit "$status"
