#!/usr/bin/env bash
# Runs the demo: starts httpbin, nginx and the OpenID Connect provider on 127.0.0.1 (scripts/servers.sh installs
# them on first use), builds and runs the Demo executable against them, then stops the servers.
#
#   scripts/demo.sh                              # the chains end in URLSessionLoader
#   scripts/demo.sh --transport asynchttpclient  # the same demo over AsyncHTTPClientLoader
#                                                # (Transports/AsyncHTTPClient; its first build takes minutes)
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

transport=urlsession
while [ $# -gt 0 ]; do
  case "$1" in
    --transport)
      [ $# -ge 2 ] || { echo "demo.sh: --transport needs urlsession or asynchttpclient" >&2; exit 2; }
      transport=$2
      shift 2
      ;;
    --transport=*) transport=${1#--transport=}; shift ;;
    -h | --help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

case "$transport" in
  urlsession) package_args=() product=Demo ;;
  asynchttpclient) package_args=(--package-path Transports/AsyncHTTPClient) product=AsyncHTTPClientDemo ;;
  *) echo "demo.sh: unknown transport '$transport' (urlsession or asynchttpclient)" >&2; exit 2 ;;
esac

echo "Building the demo ($transport)…"
if ! build_log=$(swift build ${package_args[@]+"${package_args[@]}"} --product "$product" 2>&1); then
  printf '%s\n' "$build_log" >&2
  echo "demo.sh: the build failed" >&2
  exit 1
fi
# The provider issues 2-second access tokens so that the OAuth section shows a refresh without a long wait.
export OIDC_TOKEN_LIFETIME=${OIDC_TOKEN_LIFETIME:-2}
exec scripts/servers.sh run -- swift run ${package_args[@]+"${package_args[@]}"} --skip-build "$product"
