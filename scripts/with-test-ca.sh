#!/usr/bin/env bash
# Runs a command that trusts the test CA of scripts/servers.sh (TLS_CA_FILE) the one way URLSession on Linux
# can be made to: through the system's CA bundle. swift-corelibs-foundation hands libcurl no CA setting but the
# bundle libcurl was built with (it reads URLSessionCertificateAuthorityInfoFile on Android only), and libcurl
# ignores SSL_CERT_FILE, SSL_CERT_DIR and CURL_CA_BUNDLE (measured with Swift 6.3.1 and Debian 12's libcurl
# 7.88.1). So the command runs in a mount namespace of its own, in which the system bundle is a copy of itself
# with the test CA added; nothing outside that command sees the change. It gets TLS_CA_TRUSTED=1, which turns on
# the tests that need the CA trusted.
#
#   scripts/servers.sh run -- scripts/with-test-ca.sh [--] CMD [ARGS...]
#   e.g. scripts/servers.sh run -- scripts/with-test-ca.sh swift test --skip-build --filter TLSIntegrationTests
#
# Linux only; needs util-linux's unshare, and root or unprivileged user namespaces. The command is exec'd, so
# it receives servers.sh's signals directly and its exit status is this script's.
#
# Environment:
#   TLS_CA_FILE        the CA to trust (set by scripts/servers.sh)
#   SYSTEM_CA_BUNDLE   the bundle libcurl reads (default: /etc/ssl/certs/ca-certificates.crt, Debian's and
#                      Ubuntu's; /etc/pki/tls/certs/ca-bundle.crt on Fedora and Amazon Linux)
set -euo pipefail

die() { printf 'with-test-ca.sh: error: %s\n' "$*" >&2; exit 1; }

[ "${1:-}" != -- ] || shift
[ $# -gt 0 ] || { printf 'usage: scripts/with-test-ca.sh [--] CMD [ARGS...]\n' >&2; exit 2; }
[ "$(uname -s)" = Linux ] || die "Linux only: elsewhere URLSession does not read the system's CA bundle file"
[ -n "${TLS_CA_FILE:-}" ] && [ -f "$TLS_CA_FILE" ] ||
  die "TLS_CA_FILE is not set or names no file: run me under scripts/servers.sh run"
BUNDLE=${SYSTEM_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$BUNDLE" ] || die "no CA bundle at $BUNDLE (set SYSTEM_CA_BUNDLE to the one libcurl reads)"
command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) is not on PATH"

# Next to the CA file, in the servers' folder for this run.
merged=$(dirname -- "$TLS_CA_FILE")/system-bundle-and-test-ca.pem
cat -- "$BUNDLE" "$TLS_CA_FILE" >"$merged"

namespaces=(--mount --propagation private)
[ "$(id -u)" -eq 0 ] || namespaces=(--user --map-root-user "${namespaces[@]}")
export TLS_CA_TRUSTED=1
exec unshare "${namespaces[@]}" -- sh -c 'mount --bind -- "$1" "$2" && shift 2 && exec "$@"' \
  with-test-ca "$merged" "$BUNDLE" "$@"
