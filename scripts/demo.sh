#!/usr/bin/env bash
# Runs the demo: starts httpbin and the OpenID Connect provider on 127.0.0.1 (scripts/servers.sh installs
# them on first use), builds and runs the Demo executable against them, then stops the servers.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
echo "Building the demo…"
if ! build_log=$(swift build --product Demo 2>&1); then
  printf '%s\n' "$build_log" >&2
  echo "demo.sh: the build failed" >&2
  exit 1
fi
# The provider issues 2-second access tokens so that the OAuth section shows a refresh without a long wait.
export OIDC_TOKEN_LIFETIME=${OIDC_TOKEN_LIFETIME:-2}
exec scripts/servers.sh run -- swift run --skip-build Demo
