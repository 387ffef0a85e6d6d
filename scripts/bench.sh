#!/usr/bin/env bash
# The benchmarks, against a real nginx on loopback, ending with the performance budgets of DESIGN.md and
# whether each one holds.
#
#   scripts/bench.sh [--quick] [--strict] [--budgets-only] [--precise] [--breakdown] [-- BENCHMARK-PLUGIN-ARGS...]
#
#   1. installs nginx if there is none (Debian's nginx-light, through apt-get, as root or with sudo -n);
#   2. starts it on a free 127.0.0.1 port with a config of its own in a temporary folder, serving
#      /person.json (a 213-byte JSON person) and /nginx_status (stub_status: accepted connections), and
#      stops it on exit, however the script ends;
#   3. builds the Benchmarks package in release;
#   4. runs the ordo-one/benchmark suites (`swift package benchmark`): InProcess (time and allocations per
#      request for the default chain and each of its links, 0–16 pass-through loaders and
#      swift-openapi-runtime's middleware fold), Loopback (raw URLSession, URLSessionLoader alone, the chain
#      over it, swift-openapi-urlsession) and Parking (1k/10k/100k requests parked in a Throttle);
#   5. runs BudgetReport, which measures each budgeted figure directly (interleaved rounds, medians) and
#      prints it with its budget and PASS or FAIL, and what the chain costs with cold caches (no budget);
#      the table is also saved to Benchmarks/.build/budget-report.txt (in BENCH_SCRATCH_PATH when set).
#
# Options:
#   --quick         fewer rounds and iterations everywhere: checks that everything runs, measures nothing
#   --strict        exit with status 1 when a budget fails (by default the table is the result, status 0)
#   --budgets-only  skip step 4
#   --precise       about three times the loopback rounds (31 per run, 93 in all): ratios about 1.7 times as precise
#   --only LIST     only these BudgetReport sections (inprocess,cold,loopback,asynchttpclient,openapi,observability,
#                   scale,resilience,cache,transfers,connection-stream,jsonlines,sse)
#   --breakdown     also take the chain's loopback cost apart (what a URLRequest made per call costs
#                   URLSession, the conversion from HTTPRequest, the completion-handler path, each chain
#                   link alone): 5 more minutes
#   -- ARGS         passed to `swift package benchmark` (e.g. `-- --target InProcess --format markdown`)
#
# Takes about 4 minutes on 2 cores after the first build (which takes 3–4 more). Environment: BENCH_NGINX
# (an nginx binary to use instead of the one on PATH or at /usr/sbin/nginx); BENCH_SCRATCH_PATH (the build folder,
# Benchmarks/.build by default: one of your own when others build the package at the same time).
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(dirname -- "$SCRIPT_DIR")
BENCH_DIR=$ROOT/Benchmarks
SCRATCH=${BENCH_SCRATCH_PATH:-$BENCH_DIR/.build}
QUICK=""
STRICT=""
BUDGETS_ONLY=""
PRECISE=""
BREAKDOWN=""
ONLY=""
PLUGIN_ARGS=()

note() { printf 'bench.sh: %s\n' "$*" >&2; }
die() { printf 'bench.sh: error: %s\n' "$*" >&2; exit 1; }
step() { printf '\n==> %s (at %d s)\n' "$*" "$SECONDS" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --strict) STRICT=1 ;;
    --budgets-only) BUDGETS_ONLY=1 ;;
    --precise) PRECISE=1 ;;
    --breakdown) BREAKDOWN=1 ;;
    --only) shift; [ $# -gt 0 ] || die "--only needs a list of sections"; ONLY=$1 ;;
    --) shift; PLUGIN_ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

command -v swift >/dev/null 2>&1 || die "swift is not on PATH"

# --- nginx --------------------------------------------------------------------------------------

NGINX=""
NGINX_DIR=""
NGINX_PID=""

find_nginx() {
  if [ -n "${BENCH_NGINX:-}" ]; then
    [ -x "$BENCH_NGINX" ] || die "BENCH_NGINX is '$BENCH_NGINX', which is not an executable file"
    NGINX=$BENCH_NGINX
    return 0
  fi
  NGINX=$(command -v nginx 2>/dev/null) || NGINX=""
  if [ -z "$NGINX" ] && [ -x /usr/sbin/nginx ]; then NGINX=/usr/sbin/nginx; fi
  [ -n "$NGINX" ]
}

install_nginx() {
  find_nginx && return 0
  command -v apt-get >/dev/null 2>&1 || die "found no nginx and no apt-get to install it with (set BENCH_NGINX)"
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; } ||
      die "found no nginx, and installing it takes root: run 'apt-get install nginx-light' as root"
    as_root=(sudo -n)
  fi
  note "found no nginx; installing Debian's nginx-light (apt-get update && apt-get install -y nginx-light)"
  ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get -q update </dev/null >&2 ||
    die "apt-get update failed"
  ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends \
    nginx-light </dev/null >&2 || die "apt-get could not install nginx-light"
  find_nginx || die "installed nginx-light, but found no nginx on PATH or at /usr/sbin/nginx"
}

# Whether something listens on 127.0.0.1:$1 (or on every address) over TCP, from /proc/net/tcp.
port_is_taken() {
  local hex
  hex=$(printf '%04X' "$1")
  [ -r /proc/net/tcp ] || return 1
  awk -v port="$hex" 'NR > 1 && $4 == "0A" && ($2 == "0100007F:" port || $2 == "00000000:" port) { found = 1 }
                      END { exit !found }' /proc/net/tcp
}

free_port() {
  local port tries=0
  while :; do
    port=$((20000 + RANDOM % 40000))
    port_is_taken "$port" || { printf '%s' "$port"; return 0; }
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || die "found no free port"
  done
}

write_nginx_conf() {
  local port=$1 user=""
  # As root, nginx would run its worker as nobody; keep it as the caller so it can read this folder.
  [ "$(id -u)" -ne 0 ] || user="user $(id -un) $(id -gn);"
  cat >"$NGINX_DIR/nginx.conf" <<EOF
# Written by scripts/bench.sh for one run; relative paths are relative to this folder (nginx -p).
$user
worker_processes 1;
pid nginx.pid;
lock_file nginx.lock;
error_log stderr notice;

events {
    worker_connections 1024;
}

http {
    types {
        application/json json;
    }
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    keepalive_timeout 65;
    keepalive_requests 1000000;

    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;

    server {
        listen 127.0.0.1:$port;
        root html;

        location = /person.json {
        }

        location = /nginx_status {
            stub_status;
        }

        # The transfer budgets: a 1 GiB file to download (sparse: read from the page cache, not the disk),
        # and uploads written to temp/ (WebDAV PUT) and deleted after.
        location /download/ {
        }

        location /upload/ {
            dav_methods PUT DELETE;
            client_max_body_size 0;
            create_full_put_path on;
        }

        location / {
            return 404;
        }
    }
}
EOF
}

# Starts nginx on a free port (a few tries, in case a port is taken between choosing and binding it) and
# waits until it serves the person. Sets NGINX_URL.
start_nginx() {
  NGINX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/http-bench-nginx.XXXXXX")
  chmod 755 "$NGINX_DIR"
  mkdir -p "$NGINX_DIR/html/download" "$NGINX_DIR/html/upload" "$NGINX_DIR/temp"
  truncate -s 1G "$NGINX_DIR/html/download/1G.bin"
  # The same 213-byte person as scripts/servers.sh (UTF-8, no newline at the end).
  printf '%s' '{"id":42,"name":"Zoë Example","email":"zoe@example.com","age":34,"verified":true,"roles":["admin","editor"],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"createdAt":"2024-01-15T09:30:00Z"}' \
    >"$NGINX_DIR/html/person.json"
  local try port n
  for try in 1 2 3 4 5; do
    port=$(free_port)
    write_nginx_conf "$port"
    "$NGINX" -p "$NGINX_DIR/" -c nginx.conf -e stderr -g 'daemon off;' </dev/null >"$NGINX_DIR/nginx.log" 2>&1 &
    NGINX_PID=$!
    for n in $(seq 1 100); do
      if curl -fsS --noproxy '*' -o /dev/null "http://127.0.0.1:$port/person.json" 2>/dev/null; then
        NGINX_URL=http://127.0.0.1:$port
        export NGINX_URL
        local size
        size=$(curl -fsS --noproxy '*' "$NGINX_URL/person.json" | wc -c)
        [ "$size" -eq 213 ] || die "nginx serves a $size-byte person, not 213 bytes"
        note "nginx ($("$NGINX" -v 2>&1 | sed 's/^nginx version: //')) at $NGINX_URL, folder $NGINX_DIR"
        return 0
      fi
      kill -0 "$NGINX_PID" 2>/dev/null || break
      sleep 0.1
    done
    stop_nginx
    if grep -q "Address already in use" "$NGINX_DIR/nginx.log"; then
      note "port $port was taken; trying another"
      continue
    fi
    sed 's/^/    /' "$NGINX_DIR/nginx.log" >&2
    die "nginx did not start (its log is above)"
  done
  die "nginx found its port taken on 5 tries"
}

stop_nginx() {
  [ -n "$NGINX_PID" ] || return 0
  kill -TERM "$NGINX_PID" 2>/dev/null || true
  local n=0
  while kill -0 "$NGINX_PID" 2>/dev/null && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=""
}

on_exit() {
  local status=$?
  set +e
  stop_nginx
  [ -z "$NGINX_DIR" ] || rm -rf "$NGINX_DIR"
  exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the run ------------------------------------------------------------------------------------

step "nginx"
install_nginx
start_nginx

step "build (release)"
if [ -n "$BUDGETS_ONLY" ]; then
  swift build --package-path "$BENCH_DIR" --scratch-path "$SCRATCH" -c release --product BudgetReport >&2 ||
    die "BudgetReport did not build"
else
  swift build --package-path "$BENCH_DIR" --scratch-path "$SCRATCH" -c release >&2 ||
    die "the Benchmarks package did not build"
fi

if [ -z "$BUDGETS_ONLY" ]; then
  step "ordo-one/benchmark: InProcess, Loopback, Parking"
  # (BENCH_QUICK: the suites cut their durations and iteration counts; see Benchmarks/README.md)
  BENCH_QUICK=$QUICK swift package --package-path "$BENCH_DIR" --scratch-path "$SCRATCH" benchmark --no-progress \
    ${PLUGIN_ARGS[@]+"${PLUGIN_ARGS[@]}"} || die "swift package benchmark failed"
fi

step "budgets (BudgetReport)"
report_args=()
[ -z "$QUICK" ] || report_args+=(--quick)
[ -z "$STRICT" ] || report_args+=(--strict)
[ -z "$PRECISE" ] || report_args+=(--loopback-rounds 31)  # per run: 3 runs of 31 rounds
[ -z "$BREAKDOWN" ] || report_args+=(--breakdown)
[ -z "$ONLY" ] || report_args+=(--only "$ONLY")
REPORT=$SCRATCH/budget-report.txt
status=0
"$SCRATCH/release/BudgetReport" ${report_args[@]+"${report_args[@]}"} | tee "$REPORT" || status=$?
note "table saved to ${REPORT#"$ROOT"/}; the run took $SECONDS s"
exit "$status"
