#!/usr/bin/env bash
# Real local servers for the integration tests, the demo and the benchmarks: httpbin, an OpenID Connect
# provider (twice: with OIDC_TOKEN_LIFETIME's tokens and with long-lived ones), nginx, five HTTPS servers with
# test certificates (one of them requiring a client certificate), a download server, an event-stream server, a
# production-grade OAuth 2 / OpenID Connect authorization server (django-oauth-toolkit) and two HTTP proxies
# (tinyproxy: one open, one asking for credentials).
#
#   scripts/servers.sh install             prepare the Python venv, and install nginx and tinyproxy if missing
#   scripts/servers.sh run [--] CMD ARGS   start the servers, run CMD with HTTPBIN_URL, OIDC_ISSUER_URL,
#                                          OIDC_LONG_LIVED_ISSUER_URL, NGINX_URL, NGINX_H2_URL,
#                                          TLS_SELF_SIGNED_URL, TLS_EXPIRED_URL, TLS_WRONG_NAME_URL,
#                                          TLS_TRUSTED_URL, TLS_CLIENT_AUTH_URL, TLS_CA_FILE, DOWNLOADS_URL,
#                                          EVENT_STREAM_URL, OAUTH_PROVIDER_URL, PROXY_URL, PROXY_LOG,
#                                          PROXY_AUTH_URL, PROXY_AUTH_USERNAME, PROXY_AUTH_PASSWORD and
#                                          PROXY_AUTH_LOG set, stop them, exit with CMD's status
#   scripts/servers.sh start               start them, print the export lines, wait for Ctrl-C
#
# Works from any directory. Needs bash, python3 (3.10+; with pip, or with venv's ensurepip) and,
# on the first run, PyPI. Pinned versions: scripts/requirements-servers.txt, installed into
# .build/servers-venv (reused while the requirements file and SERVERS_PYTHON are unchanged; an
# interrupted install is redone). Server logs: .build/servers-logs/.
# Needs nginx too: SERVERS_NGINX, else the one on PATH, else /usr/sbin/nginx. With none of them, it is
# installed from Debian's packages: `apt-get update`, then `apt-get install --no-install-recommends
# nginx-light` (or nginx where there is no nginx-light), as root or through `sudo -n` (about 10 s the
# first time). On Debian 12 that is nginx 1.22.1 (nginx-light 1.22.1-9+deb12u11: the nginx package plus
# an echo module, which the config here does not load). Where a service manager runs, installing the
# package also starts Debian's own nginx, on port 80, which is no concern of this script's.
# Needs tinyproxy too, found and installed the same way: SERVERS_TINYPROXY, else the one on PATH, else
# /usr/bin/tinyproxy or /usr/sbin/tinyproxy, else Debian's tinyproxy-bin (the program alone, no service; tinyproxy
# where there is no tinyproxy-bin): tinyproxy 1.11.1 on Debian 12.
#
# The servers, all bound to 127.0.0.1 on free ports, each in its own process group:
#   httpbin 0.10.4 under gunicorn 23.0.0, from the venv's folder:
#     gunicorn --bind 127.0.0.1:PORT --workers 2 --worker-class gthread --threads 16
#              --keep-alive 30 --graceful-timeout 2 --access-logfile - --error-logfile - httpbin:app
#     (32 requests at once, so a /delay/10 or a /drip blocks nobody; a long keep-alive so an idle
#     pooled connection is not closed under a client between two requests; a short graceful stop,
#     as a request a test gave up on, such as a cancelled /delay/10, would otherwise hold it up)
#   oidc-provider-mock 0.3.4 (Authlib 1.9.9, served by uvicorn 0.54.0):
#     oidc-provider-mock --host 127.0.0.1 --port PORT [--token-max-age "$OIDC_TOKEN_LIFETIME"]
#     (--token-max-age is the CLI's -e; without it tokens live 3600 s, the provider's default)
#   and a second one as OIDC_LONG_LIVED_ISSUER_URL, always without --token-max-age (3600 s tokens, whatever
#   OIDC_TOKEN_LIFETIME says; log oidc-provider-mock-long-lived.log): for the tests that need a token to stay
#   valid while they use it, which on a busy machine (ThreadSanitizer beside other work) a 2 s token may not,
#   and that drive expiry with the client's clock instead. OIDC_ISSUER_URL's short tokens are for the tests
#   that need the server itself to reject an expired token.
#   nginx (1.22.1 on Debian 12), with a config this script writes for each run into a folder of its
#   own, .build/servers-nginx/run/ (run-PID while another servers.sh in this checkout has that one),
#   which also holds the pid file, the access log (access.log), the temp folders and the document root,
#   so nothing under /etc/nginx or /var is read or written:
#     nginx -p .build/servers-nginx/run/ -c nginx.conf -e stderr -g 'daemon off;'
#     (one worker process; keep-alive 65 s and up to 100000 requests a connection; the error log, at
#     notice level, goes to stderr, that is to .build/servers-logs/nginx.log; run as root, the worker
#     stays root, as nobody, nginx's default, may not read a checkout under /root)
#     GET /health       200 "ok" (text/plain)
#     GET /person.json  200, a static 213-byte JSON person (application/json), for the benchmarks
#     GET /people/42    the same person, for the demo's typed requests; /people/<other id> is a 404 with a
#                       JSON problem body ({"code":"not_found","message":…})
#     GET /limited      200 {"ok":true} (application/json), limited to 20 requests/s with a burst of 10
#                       (limit_req burst=10 nodelay): beyond that 429 at once; all clients share one
#                       budget, as all come from 127.0.0.1; both answers carry "Retry-After: 1"
#     GET /download/32M.bin   32 MiB (byte i is i % 251), made for each run, with nginx's ETag,
#                       Last-Modified and Range support: for downloads, progress and resuming
#     every response but /limited's carries X-Connection, nginx's serial number of its connection
#   and, on a second port, as NGINX_H2_URL: HTTPS with HTTP/2 (listen ... ssl http2; ALPN h2), with the
#   tls-trusted server's certificate (below: issued by the test CA for 127.0.0.1). Every response carries
#   X-Connection (nginx's serial number of the connection it came over), X-Connection-Requests and X-Protocol
#   ("HTTP/2.0"); its access log is h2-access.log in nginx's folder, with connection=N on each line.
#     GET /health, /person.json, /download/32M.bin   as above
#     GET /slow/32M.bin     the same 32 MiB, sent at 4 MiB/s after its first MiB
#   a download server (scripts/download-server.py, from the venv's Python) as DOWNLOADS_URL:
#     python scripts/download-server.py --port PORT
#     GET /file/SIZE[?drop=KEY&version=V&slow=MS]  SIZE bytes of the same pattern, with a strong ETag, ranges
#                       and If-Range; the first response for each drop KEY is cut off half-way, for the
#                       tests of resumed downloads (see the script's header)
#   an event-stream server (scripts/event-stream-server.py: sse-starlette's encoding under uvicorn) as
#   EVENT_STREAM_URL:
#     python scripts/event-stream-server.py --port PORT
#     GET /numbers?count=N[&close_after=K&retry=MS&sep=crlf|lf|cr&comment=1]  events 1..N resumed after
#                       Last-Event-ID, the connection ended after K of them, 204 once all are sent
#   an OAuth 2 / OpenID Connect authorization server, django-oauth-toolkit 3.4.1 (Django 5.2.19, oauthlib
#   3.3.1) in the Django project scripts/oauth-provider/, as OAUTH_PROVIDER_URL; its SQLite database and
#   its ID-token signing key (RSA, made for each run) live in a folder of their own,
#   .build/servers-oauth-provider/run/ (run-PID as for nginx's). Each start migrates that database and
#   creates the test user and the clients (manage.py setup_test_provider, about 3 s, while the other
#   servers start), then:
#     gunicorn --pythonpath scripts/oauth-provider --bind 127.0.0.1:PORT --workers 1 --threads 8
#              --graceful-timeout 2 --access-logfile - --error-logfile - provider.wsgi:application
#     (one process, as the SQLite database takes one writer at a time; 8 threads)
#     issuer OAUTH_PROVIDER_URL/o: /o/.well-known/openid-configuration, /o/authorize/, /o/token/,
#     /o/revoke_token/, /o/introspect/, /o/device-authorization/, /o/device/, /o/userinfo/; RFC 8414
#     metadata also at /.well-known/oauth-authorization-server; GET /api/me, a protected resource (200
#     with the token's user, client_id and scope; 401 with WWW-Authenticate otherwise).
#     PKCE required, refresh tokens rotated (the old one refused at once), access and ID tokens living
#     OIDC_TOKEN_LIFETIME seconds (default 3600), device codes polled every second (OAUTH_DEVICE_INTERVAL=1;
#     DOT never answers slow_down). Clients: pkce-app (public; authorization code; redirect URI
#     com.example.app:/oauth/callback; RS256 ID tokens), worker (confidential, secret worker-secret;
#     client credentials), tv-app (public; device code). TEST ONLY: every request is the test user's, so
#     logins and device codes are approved without a human by requests to DOT's own views (see
#     scripts/oauth-provider/provider/middleware.py).
#   five HTTPS servers (Python's http.server and ssl, from the venv's Python: scripts/tls-servers.py):
#     python scripts/tls-servers.py serve --port PORT --cert NAME.pem --key NAME.key --name NAME
#            [--client-ca ca.pem]
#     GET /health 200 "ok" (text/plain), GET / 200 {"server": NAME} (application/json), else 404.
#     Their certificates are made for each run (scripts/tls-servers.py certs; EC P-256 keys, nothing kept
#     between runs, the CA's key never written) in a folder of their own, .build/servers-tls/run/
#     (run-PID as for nginx's), and all but one are for 127.0.0.1 and localhost:
#       tls-self-signed  TLS_SELF_SIGNED_URL  self-signed
#       tls-expired      TLS_EXPIRED_URL      issued by the test CA, expired a day ago
#       tls-wrong-name   TLS_WRONG_NAME_URL   issued by the test CA, valid, for example.invalid only
#       tls-trusted      TLS_TRUSTED_URL      issued by the test CA, valid: good for a client that trusts it
#       tls-client-auth  TLS_CLIENT_AUTH_URL  the trusted server's certificate, and mutual TLS: the handshake
#                                             requires a client certificate the test CA issued (none, or a
#                                             stranger's, is refused with a TLS alert); GET / answers
#                                             {"server": "client-auth", "client": SUBJECT}, the subject of the
#                                             certificate presented ("CN=HTTP package test client,O=...")
#     TLS_CA_FILE is the test CA's certificate (PEM). Beside it: client-identity.pem, the client certificate
#     the test CA issued and its key in one PEM file (what tls-client-auth accepts), and stranger-identity.pem,
#     a self-signed one (what it refuses). A client that does not trust it, such as URLSession
#     on Linux, which cannot be told to, fails the expired and wrong-name servers for the unknown issuer
#     first (libcurl: "SSL certificate problem: unable to get local issuer certificate"); one that does
#     fails them for the expiry resp. the name (`curl --cacert "$TLS_CA_FILE"`: "certificate has expired",
#     "no alternative certificate subject name matches target host name '127.0.0.1'").
#   two HTTP proxies, tinyproxy 1.11.1, each with a config this script writes for each run into
#   .build/servers-proxy/run/ (run-PID as for nginx's), logging every request to its log file (stderr, at
#   level Info; its path is handed over as PROXY_LOG resp. PROXY_AUTH_LOG):
#     tinyproxy -d -c proxy.conf
#     (CONNECT allowed to every port, so that https origins on loopback can be tunnelled to; forwarded requests
#     carry "Via: 1.1 tinyproxy (tinyproxy/1.11.1)"; Proxy-Authorization is never forwarded; the log has a line
#     "Request (file descriptor N): GET http://HOST:PORT/PATH HTTP/1.1" resp. "... CONNECT HOST:PORT HTTP/1.1"
#     for each request)
#       proxy        PROXY_URL         open to every client on 127.0.0.1
#       proxy-auth   PROXY_AUTH_URL    the same, and requires Basic credentials (BasicAuth): PROXY_AUTH_USERNAME,
#                                      PROXY_AUTH_PASSWORD (a new random password for each run); without them
#                                      (or with wrong ones) it answers 407 Proxy Authentication Required, to a
#                                      forwarded request and to a CONNECT alike
# A server counts as up when its log says it has bound the port ("Listening at: http://127.0.0.1:PORT",
# "Uvicorn running on http://127.0.0.1:PORT", nginx's "start worker processes", "Serving HTTPS on
# 127.0.0.1:PORT") and GET /get, /.well-known/openid-configuration (/o/… for the authorization server),
# resp. /health, answers 200 (for a proxy: httpbin's /get, asked through it, with its credentials): over TLS
# without checking the certificate, except the trusted and the client-auth servers', which must pass a check
# against TLS_CA_FILE (name included); the client-auth server's probe presents client-identity.pem. A port taken between picking and binding is retried on a new port (3 tries).
#
# Observed in oidc-provider-mock 0.3.4 (see also DESIGN.md): POST /oauth2/authorize?response_type=code
# &client_id=..&redirect_uri=..&state=.. with form sub=alice answers 302 to redirect_uri?code=..&state=..;
# any client id/secret is accepted; the issuer is taken from the Host header (use 127.0.0.1, not
# localhost). --token-max-age applies only to tokens from the authorization_code grant: a token from
# the refresh_token grant always gets expires_in 3600, and its response carries no new refresh_token.
#
# Environment:
#   OIDC_TOKEN_LIFETIME     access/ID token lifetime in seconds, for oidc-provider-mock at OIDC_ISSUER_URL
#                           and for django-oauth-toolkit (default: theirs, 3600); never for the one at
#                           OIDC_LONG_LIVED_ISSUER_URL
#   SERVERS_PYTHON          interpreter the venv is made from (default: python3)
#   SERVERS_NGINX           the nginx binary (default: nginx on PATH, else /usr/sbin/nginx, else installed)
#   SERVERS_TINYPROXY       the tinyproxy binary (default: tinyproxy on PATH, else /usr/bin or /usr/sbin, else
#                           installed)
#   SERVERS_READY_TIMEOUT   seconds each server has to come up (default: 30)
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(dirname -- "$SCRIPT_DIR")
BUILD_DIR=$ROOT/.build
VENV=$BUILD_DIR/servers-venv
STAMP=$VENV/.servers-installed
REQUIREMENTS=$SCRIPT_DIR/requirements-servers.txt
LOG_DIR=$BUILD_DIR/servers-logs
NGINX_DIRS=$BUILD_DIR/servers-nginx  # each run's nginx folder is made in here
NGINX_DIR=""
OAUTH_PROVIDER_DIRS=$BUILD_DIR/servers-oauth-provider  # each run's database and key folder is made in here
OAUTH_PROVIDER_DIR=""
TLS_DIRS=$BUILD_DIR/servers-tls  # each run's certificate folder is made in here
TLS_DIR=""
PROXY_DIRS=$BUILD_DIR/servers-proxy  # each run's tinyproxy configs are made in here
PROXY_DIR=""
PROXY_AUTH_USERNAME=proxy-user
PROXY_AUTH_PASSWORD=""  # made for each run
TINYPROXY=""  # the tinyproxy binary, once found
NGINX_H2_PORT=""  # nginx's HTTPS port with HTTP/2
NGINX=""  # the nginx binary, once found
PYTHON=${SERVERS_PYTHON:-python3}
READY_TIMEOUT=${SERVERS_READY_TIMEOUT:-30}
STOP_TIMEOUT=10  # seconds a server gets after its stop signal, or CMD after SIGTERM, before SIGKILL
PORT_TRIES=3

# The servers, by index: 0 = httpbin, 1 = the OpenID Connect provider, 2 = nginx, 3-6 = the HTTPS servers
# (each named tls-<its certificate's file name>), 10 = the HTTPS server that requires a client certificate,
# 11 and 12 = the proxies (probed with httpbin's /get through them), 13 = the OpenID Connect provider with
# long-lived tokens.
SERVER_NAME=(httpbin oidc-provider-mock nginx tls-self-signed tls-expired tls-wrong-name tls-trusted downloads
  event-stream oauth-provider tls-client-auth proxy proxy-auth oidc-provider-mock-long-lived)
SERVER_PROBE=(/get /.well-known/openid-configuration /health /health /health /health /health /health /health
  /o/.well-known/openid-configuration /health /get /get /.well-known/openid-configuration)
# gunicorn's quick shutdown (its workers notice a TERM only after up to 1 s); nginx's fast shutdown; Python's
# default for TERM, which ends the TLS servers at once
SERVER_STOP_SIGNAL=(QUIT TERM TERM TERM TERM TERM TERM TERM TERM QUIT TERM TERM TERM TERM)
FIRST_TLS_SERVER=3
TLS_TRUSTED_SERVER=6
DOWNLOADS_SERVER=7
EVENT_STREAM_SERVER=8
OAUTH_PROVIDER_SERVER=9
TLS_CLIENT_AUTH_SERVER=10
PROXY_SERVER=11
PROXY_AUTH_SERVER=12
OIDC_LONG_LIVED_SERVER=13
SERVER_PID=()
SERVER_PORT=()
SERVER_LOG=()
SERVER_STARTED_AT=()
SERVER_TRIES=()
CHILD_PID=""  # the child run_child is waiting for, so a signal can be passed on to it
CHILD_KIND=""
CAUGHT_SIGNAL=""  # set by the signal trap, with the status to exit with
CAUGHT_STATUS=0

note() { printf 'servers.sh: %s\n' "$*" >&2; }
die() { printf 'servers.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  cat <<'EOF'
usage: scripts/servers.sh install
       scripts/servers.sh run [--] CMD [ARGS...]
       scripts/servers.sh start
Starts httpbin, oidc-provider-mock (twice), nginx, five HTTPS servers with test certificates (one requiring
a client certificate), a download server, an event-stream server, django-oauth-toolkit and two tinyproxy
proxies on 127.0.0.1 (free ports) and hands their URLs over as HTTPBIN_URL, OIDC_ISSUER_URL (tokens living
OIDC_TOKEN_LIFETIME seconds), OIDC_LONG_LIVED_ISSUER_URL (tokens living 3600 s), NGINX_URL, NGINX_H2_URL
(nginx over HTTPS with HTTP/2), TLS_SELF_SIGNED_URL, TLS_EXPIRED_URL, TLS_WRONG_NAME_URL, TLS_TRUSTED_URL,
TLS_CLIENT_AUTH_URL, DOWNLOADS_URL, EVENT_STREAM_URL, OAUTH_PROVIDER_URL, PROXY_URL and PROXY_AUTH_URL (with
PROXY_AUTH_USERNAME and PROXY_AUTH_PASSWORD; the proxies' logs as PROXY_LOG and PROXY_AUTH_LOG), with the
test CA's certificate as TLS_CA_FILE.
Environment: OIDC_TOKEN_LIFETIME, SERVERS_PYTHON, SERVERS_NGINX, SERVERS_TINYPROXY, SERVERS_READY_TIMEOUT.
Logs: .build/servers-logs/.
EOF
}

# --- the venv -------------------------------------------------------------------------------

venv_is_ready() {  # (-x follows the venv's python symlink: fails once its interpreter is gone)
  local want=$1 have=""
  [ -f "$STAMP" ] && read -r have <"$STAMP" && [ "$have" = "$want" ] && [ -x "$VENV/bin/python" ]
}

# Makes sure the venv is installed and current. Where flock exists, this script then holds a shared lock
# on it for as long as it runs, and an install takes that lock exclusively: an install neither races
# another one nor pulls the venv from under the servers of another run (a pin changed meanwhile).
install_venv() {
  local key locked=""
  key="v1 $PYTHON $(cksum <"$REQUIREMENTS")"
  mkdir -p "$BUILD_DIR"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$BUILD_DIR/servers-venv.lock"
    flock -s -w 900 9 || die "timed out waiting for another servers.sh to finish installing"
    venv_is_ready "$key" && return 0
    flock -x -w 900 9 ||  # (trading the shared lock for this one lets go of the shared one first)
      die "timed out waiting for the other servers.sh runs using ${VENV#"$ROOT"/} to finish"
    locked=1
  fi
  if venv_is_ready "$key"; then [ -z "$locked" ] || flock -s 9; return 0; fi
  command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (set SERVERS_PYTHON to a Python 3.10+)"

  note "installing the test servers into ${VENV#"$ROOT"/} (pinned in scripts/requirements-servers.txt)"
  rm -rf "$VENV"
  local out pip
  if out=$("$PYTHON" -m venv "$VENV" 2>&1); then
    pip=("$VENV/bin/python" -m pip)
  else
    # Debian's python3 without python3-venv has no ensurepip: make the venv without pip and let
    # the interpreter's own pip (22.3+) install into it.
    rm -rf "$VENV"
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1 || ! out=$("$PYTHON" -m venv --without-pip "$VENV" 2>&1); then
      die "could not create $VENV with $PYTHON (install python3-venv or python3-pip):"$'\n'"$out"
    fi
    pip=("$PYTHON" -m pip --python "$VENV/bin/python")
  fi
  PIP_DISABLE_PIP_VERSION_CHECK=1 "${pip[@]}" install --quiet --no-input --requirement "$REQUIREMENTS" ||
    die "pip could not install scripts/requirements-servers.txt (see above)"
  out=$("${pip[@]}" check 2>&1) || die "the installed servers have broken dependencies:"$'\n'"$out"
  out=$("$VENV/bin/python" -c 'import httpbin, gunicorn, oidc_provider_mock, sse_starlette, starlette, uvicorn, django, oauth2_provider' 2>&1) ||
    die "the servers do not import after installing:"$'\n'"$out"
  printf '%s\n' "$key" >"$STAMP"
  [ -z "$locked" ] || flock -s 9
}

# --- nginx ----------------------------------------------------------------------------------

# Sets NGINX to the nginx binary: SERVERS_NGINX, else nginx on PATH, else /usr/sbin/nginx (Debian's
# place for it, on root's PATH only). Fails if there is none.
find_nginx() {
  if [ -n "${SERVERS_NGINX:-}" ]; then
    NGINX=$SERVERS_NGINX
    [ -x "$NGINX" ] || die "SERVERS_NGINX is set to '$NGINX', which is not an executable file"
    return 0
  fi
  NGINX=$(command -v nginx 2>/dev/null) || NGINX=""
  if [ -z "$NGINX" ] && [ -x /usr/sbin/nginx ]; then NGINX=/usr/sbin/nginx; fi
  [ -n "$NGINX" ]
}

# Makes sure there is a program NAME (find_NAME sets the upper-case variable NAME to it); if there is none, installs
# Debian's package PACKAGE (FALLBACK where there is no PACKAGE) with apt-get, as root or through sudo -n. Where flock
# exists, one servers.sh of this checkout installs a program at a time; apt-get itself waits up to 5 minutes for a
# dpkg lock someone else holds. PLACES says where find_NAME looked and OVERRIDE names its variable, for the messages.
#   install_program NAME PACKAGE FALLBACK PLACES OVERRIDE
install_program() {
  local name=$1 package=$2 fallback=$3 places=$4 override=$5
  local variable=${name^^} as_root=() started=$SECONDS out
  "find_$name" && return 0
  command -v apt-get >/dev/null 2>&1 ||
    die "found no $name ($places), nor apt-get to install one with: install $name, or set $override to its binary"
  if [ "$(id -u)" -ne 0 ]; then
    { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; } ||
      die "found no $name ($places), and installing it takes root: run 'apt-get install --no-install-recommends $package' as root (or set $override to a $name binary)"
    as_root=(sudo -n)
  fi
  mkdir -p "$BUILD_DIR"
  if command -v flock >/dev/null 2>&1; then
    exec 7>"$BUILD_DIR/servers-$name.lock"
    flock -x -w 900 7 || die "timed out waiting for another servers.sh to finish installing $name"
    if "find_$name"; then exec 7>&-; return 0; fi
  fi
  local apt=(${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
  note "found no $name; installing it from Debian's packages (apt-get update, then apt-get install)"
  # (apt-get's output goes to stderr, as stdout is the export lines' in start mode; no lock fd is passed
  # on, as it would stay held by a service the package starts)
  "${apt[@]}" update </dev/null >&2 7>&- 8>&- 9>&- || die "apt-get update failed (see above)"
  out=$(apt-cache policy "$package" 2>/dev/null) || out=""
  case $out in *"Candidate: (none)"*|"") package=$fallback ;; esac
  "${apt[@]}" install -y --no-install-recommends "$package" </dev/null >&2 7>&- 8>&- 9>&- ||
    die "apt-get could not install $package (see above)"
  exec 7>&-
  "find_$name" || die "installed Debian's $package, but found no $name ($places)"
  note "installed $package in $((SECONDS - started)) s: $("${!variable}" -v 2>&1)"
}

# Makes sure there is an nginx: Debian's nginx-light (nginx where there is no nginx-light) if there is none.
install_nginx() {
  install_program nginx nginx-light nginx "on PATH, at /usr/sbin/nginx" SERVERS_NGINX
}

# --- tinyproxy ------------------------------------------------------------------------------

# Sets TINYPROXY to the tinyproxy binary: SERVERS_TINYPROXY, else tinyproxy on PATH, else /usr/bin/tinyproxy or
# /usr/sbin/tinyproxy. Fails if there is none.
find_tinyproxy() {
  if [ -n "${SERVERS_TINYPROXY:-}" ]; then
    TINYPROXY=$SERVERS_TINYPROXY
    [ -x "$TINYPROXY" ] || die "SERVERS_TINYPROXY is set to '$TINYPROXY', which is not an executable file"
    return 0
  fi
  TINYPROXY=$(command -v tinyproxy 2>/dev/null) || TINYPROXY=""
  local candidate
  for candidate in /usr/bin/tinyproxy /usr/sbin/tinyproxy; do
    if [ -z "$TINYPROXY" ] && [ -x "$candidate" ]; then TINYPROXY=$candidate; fi
  done
  [ -n "$TINYPROXY" ]
}

# Makes sure there is a tinyproxy: Debian's tinyproxy-bin (the program alone, no service; tinyproxy where there is no
# tinyproxy-bin) if there is none.
install_tinyproxy() {
  install_program tinyproxy tinyproxy-bin tinyproxy "on PATH, in /usr/bin, /usr/sbin" SERVERS_TINYPROXY
}

# Makes this run's folder for the proxies' configs (written at launch) and the proxy password.
prepare_proxy_dir() {
  rm -rf "$PROXY_DIR"
  mkdir -p "$PROXY_DIR"
  PROXY_AUTH_PASSWORD=$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(12))')
}

# Writes the config of proxy server $1 (PROXY_SERVER or PROXY_AUTH_SERVER) for port $2.
write_proxy_conf() {
  {
    printf '# Written by scripts/servers.sh for one run.\n'
    printf 'Port %s\nListen 127.0.0.1\nTimeout 60\nLogLevel Info\nMaxClients 200\n' "$2"
    printf 'ViaProxyName "tinyproxy"\n'
    printf '# No ConnectPort line: CONNECT is allowed to every port.\n'
    if [ "$1" -eq "$PROXY_AUTH_SERVER" ]; then
      printf 'BasicAuth %s %s\n' "$PROXY_AUTH_USERNAME" "$PROXY_AUTH_PASSWORD"
    fi
  } >"$PROXY_DIR/${SERVER_NAME[$1]}.conf"
}

# Makes this run's nginx folder: document root, temp folders' parent; the config is written at launch.
# The person is 213 bytes of UTF-8, with no newline at the end.
prepare_nginx_dir() {
  rm -rf "$NGINX_DIR"
  mkdir -p "$NGINX_DIR/html" "$NGINX_DIR/temp"
  printf '%s' '{"id":42,"name":"Zoë Example","email":"zoe@example.com","age":34,"verified":true,"roles":["admin","editor"],"address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"createdAt":"2024-01-15T09:30:00Z"}' \
    >"$NGINX_DIR/html/person.json"
  printf '%s' '{"ok":true}' >"$NGINX_DIR/html/limited.json"
  # Downloads: 32 MiB of a pattern a test can check (byte i is i % 251), served with ETag and ranges.
  mkdir -p "$NGINX_DIR/html/download"
  "$VENV/bin/python" -c 'import sys; n = 32 * 1024 * 1024; sys.stdout.buffer.write((bytes(range(251)) * (n // 251 + 1))[:n])' \
    >"$NGINX_DIR/html/download/32M.bin"
}

# Makes this run's certificates for the HTTPS servers (with Ctrl-C ignored, as in free_port).
prepare_tls_dir() {
  rm -rf "$TLS_DIR"
  ( trap '' INT; exec "$VENV/bin/python" "$SCRIPT_DIR/tls-servers.py" certs "$TLS_DIR" ) </dev/null 8>&- 9>&- ||
    die "could not make the test certificates in ${TLS_DIR#"$ROOT"/}"
}

# Makes this run's folder for the authorization server's database and signing key (filled when it starts).
prepare_oauth_provider_dir() {
  rm -rf "$OAUTH_PROVIDER_DIR"
  mkdir -p "$OAUTH_PROVIDER_DIR"
}

# Writes nginx.conf for port $1, and $2 for HTTPS with HTTP/2. Its paths are relative to the prefix (-p), this
# run's folder, so the folder's own path needs no quoting in it; the certificate's are quoted.
write_nginx_conf() {
  local user=""
  # As root, nginx would run its worker as nobody, who may not be able to read this checkout.
  [ "$(id -u)" -ne 0 ] || user="user $(id -un) $(id -gn);"
  cat >"$NGINX_DIR/nginx.conf" <<EOF
# Written by scripts/servers.sh for one run; relative paths are relative to this folder (nginx -p).
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
        text/plain txt;
    }
    default_type application/octet-stream;
    access_log access.log combined buffer=32k flush=1s;
    log_format h2 '\$remote_addr [\$time_local] "\$request" \$status \$body_bytes_sent connection=\$connection '
                  'request=\$connection_requests';
    sendfile on;
    keepalive_timeout 65;
    keepalive_requests 100000;

    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;

    limit_req_zone \$binary_remote_addr zone=burst:1m rate=20r/s;
    limit_req_log_level notice;  # (a refusal is what /limited is for, not an error)

    server {
        listen 127.0.0.1:$1;
        root html;
        # Each response names its connection (nginx's serial number), for tests of connection reuse.
        add_header X-Connection \$connection always;

        location = /health {
            default_type text/plain;
            return 200 'ok';
        }

        location = /person.json {
        }

        # The demo's typed API: person 42 exists, every other id is a JSON problem with a 404.
        location = /people/42 {
            default_type application/json;
            try_files /person.json =500;
        }

        location ~ ^/people/[0-9]+\$ {
            default_type application/json;
            return 404 '{"code":"not_found","message":"There is no such person"}';
        }

        location = /limited {
            limit_req zone=burst burst=10 nodelay;
            limit_req_status 429;
            add_header Retry-After 1 always;
            default_type application/json;
            # (the body comes from a file: a "return" would answer in the rewrite phase, before
            # limit_req, which acts in the preaccess phase, has had its say)
            try_files /limited.json =500;
        }

        # Static downloads, with ETag, Last-Modified and Range support (nginx's own).
        location /download/ {
        }

        location / {
            return 404;
        }
    }

    # HTTPS with HTTP/2 (ALPN h2, HTTP/1.1 for clients that do not offer it), with the trusted server's
    # certificate (the test CA's, for 127.0.0.1). Each response names its connection: X-Connection is nginx's
    # serial number for it, X-Connection-Requests the number of requests it has carried, X-Protocol the
    # protocol ("HTTP/2.0"), so a client can see which loads shared one.
    server {
        listen 127.0.0.1:$2 ssl http2;
        ssl_certificate "$TLS_DIR/trusted.pem";
        ssl_certificate_key "$TLS_DIR/trusted.key";
        root html;
        access_log h2-access.log h2 buffer=32k flush=1s;
        add_header X-Connection \$connection always;
        add_header X-Connection-Requests \$connection_requests always;
        add_header X-Protocol \$server_protocol always;

        location = /health {
            default_type text/plain;
            return 200 'ok';
        }

        location = /person.json {
        }

        # The 32 MiB download, and the same sent at 4 MiB/s after its first MiB (a transfer that is still
        # under way when a test cancels it).
        location /download/ {
        }

        location = /slow/32M.bin {
            limit_rate_after 1m;
            limit_rate 4m;
            try_files /download/32M.bin =500;
        }

        location / {
            return 404;
        }
    }
}
EOF
}

# --- the servers ----------------------------------------------------------------------------

free_port() {  # (with Ctrl-C ignored: it is this script's to handle, not Python's to print a traceback for)
  ( trap '' INT; exec "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' )
}

# Sets SERVER_ARGV to the command line of server $1 listening on port $2.
server_argv() {
  case $1 in
    0) SERVER_ARGV=("$VENV/bin/gunicorn" --bind "127.0.0.1:$2" --workers 2 --worker-class gthread
                    --threads 16 --keep-alive 30 --graceful-timeout 2
                    --access-logfile - --error-logfile - httpbin:app) ;;
    1) SERVER_ARGV=("$VENV/bin/oidc-provider-mock" --host 127.0.0.1 --port "$2")
       [ -z "${OIDC_TOKEN_LIFETIME:-}" ] || SERVER_ARGV+=(--token-max-age "$OIDC_TOKEN_LIFETIME") ;;
    13) SERVER_ARGV=("$VENV/bin/oidc-provider-mock" --host 127.0.0.1 --port "$2") ;;
    2) SERVER_ARGV=("$NGINX" -p "$NGINX_DIR/" -c nginx.conf -e stderr -g 'daemon off;') ;;
    7) SERVER_ARGV=("$VENV/bin/python" "$SCRIPT_DIR/download-server.py" --port "$2") ;;
    8) SERVER_ARGV=("$VENV/bin/python" "$SCRIPT_DIR/event-stream-server.py" --port "$2") ;;
    9) # (setup_test_provider migrates and makes the clients, again harmlessly after a retry on a new port; no
       # bytecode is written next to the project's sources in the checkout)
       SERVER_ARGV=(/usr/bin/env "OAUTH_PROVIDER_RUN_DIR=$OAUTH_PROVIDER_DIR" "OAUTH_PROVIDER_URL=http://127.0.0.1:$2"
                    OAUTH_DEVICE_INTERVAL=1 PYTHONDONTWRITEBYTECODE=1 /bin/sh -c '"$1" "$2/manage.py" setup_test_provider && shift 2 && exec "$@"'
                    sh "$VENV/bin/python" "$SCRIPT_DIR/oauth-provider"
                    "$VENV/bin/gunicorn" --pythonpath "$SCRIPT_DIR/oauth-provider" --bind "127.0.0.1:$2"
                    --workers 1 --threads 8 --graceful-timeout 2 --access-logfile - --error-logfile -
                    provider.wsgi:application) ;;
    11|12) SERVER_ARGV=("$TINYPROXY" -d -c "$PROXY_DIR/${SERVER_NAME[$1]}.conf") ;;
    10) SERVER_ARGV=("$VENV/bin/python" "$SCRIPT_DIR/tls-servers.py" serve --port "$2"
                     --cert "$TLS_DIR/trusted.pem" --key "$TLS_DIR/trusted.key" --name client-auth
                     --client-ca "$TLS_DIR/ca.pem") ;;
    *) local name=${SERVER_NAME[$1]#tls-}
       SERVER_ARGV=("$VENV/bin/python" "$SCRIPT_DIR/tls-servers.py" serve --port "$2"
                    --cert "$TLS_DIR/$name.pem" --key "$TLS_DIR/$name.key" --name "$name") ;;
  esac
}

# What server $1 logs once it has bound its port.
bound_marker() {
  case $1 in
    0|9) printf 'Listening at: http://127.0.0.1:%s (' "${SERVER_PORT[$1]}" ;;
    1|13) printf 'Uvicorn running on http://127.0.0.1:%s ' "${SERVER_PORT[$1]}" ;;
    2) printf 'start worker processes' ;;  # (logged once it has bound the port its config names)
    7) printf 'download-server listening on 127.0.0.1:%s' "${SERVER_PORT[$1]}" ;;
    8) printf 'Uvicorn running on http://127.0.0.1:%s ' "${SERVER_PORT[$1]}" ;;
    11|12) printf 'Starting main loop. Accepting connections.' ;;
    *) printf 'Serving HTTPS on 127.0.0.1:%s (' "${SERVER_PORT[$1]}" ;;
  esac
}

server_url() {
  if { [ "$1" -ge "$FIRST_TLS_SERVER" ] && [ "$1" -le "$TLS_TRUSTED_SERVER" ]; } ||
    [ "$1" -eq "$TLS_CLIENT_AUTH_SERVER" ]; then
    printf 'https://127.0.0.1:%s' "${SERVER_PORT[$1]}"
  else printf 'http://127.0.0.1:%s' "${SERVER_PORT[$1]}"; fi
}

# The CA file the readiness probe checks server $1's certificate against; none (no check) for the others.
probe_ca_file() {
  if [ "$1" -eq "$TLS_TRUSTED_SERVER" ] || [ "$1" -eq "$TLS_CLIENT_AUTH_SERVER" ]; then printf '%s' "$TLS_DIR/ca.pem"; fi
}

# The proxy (URL, with its credentials) the readiness probe of server $1 goes through; none for the others.
probe_proxy() {
  case $1 in
    "$PROXY_SERVER") printf 'http://127.0.0.1:%s' "${SERVER_PORT[$1]}" ;;
    "$PROXY_AUTH_SERVER")
      printf 'http://%s:%s@127.0.0.1:%s' "$PROXY_AUTH_USERNAME" "$PROXY_AUTH_PASSWORD" "${SERVER_PORT[$1]}" ;;
  esac
}

# The URL the readiness probe of server $1 asks for: a proxy's is httpbin's, through the proxy.
probe_url() {
  if [ "$1" -eq "$PROXY_SERVER" ] || [ "$1" -eq "$PROXY_AUTH_SERVER" ]; then
    printf '%s%s' "$(server_url 0)" "${SERVER_PROBE[$1]}"
  else printf '%s%s' "$(server_url "$1")" "${SERVER_PROBE[$1]}"; fi
}

# The client identity (certificate and key, PEM) the readiness probe presents to server $1; none for the others.
probe_identity_file() {
  if [ "$1" -eq "$TLS_CLIENT_AUTH_SERVER" ]; then printf '%s' "$TLS_DIR/client-identity.pem"; fi
}

# Starts server $1 on a fresh port, as the leader of a new process group (so stopping it stops its
# workers too), from the venv's folder (so no gunicorn.conf.py or module in the caller's cwd is picked up).
launch_server() {
  local i=$1 port
  port=$(free_port)
  server_argv "$i" "$port"
  if [ "$i" -eq 2 ]; then
    NGINX_H2_PORT=$(free_port)
    write_nginx_conf "$port" "$NGINX_H2_PORT"
  fi
  if [ "$i" -eq "$PROXY_SERVER" ] || [ "$i" -eq "$PROXY_AUTH_SERVER" ]; then write_proxy_conf "$i" "$port"; fi
  : >"${SERVER_LOG[$i]}"
  (
    cd "$VENV"
    unset GUNICORN_CMD_ARGS
    export PYTHONUNBUFFERED=1
    exec "$VENV/bin/python" -c 'import os, sys; os.setsid(); os.execv(sys.argv[1], sys.argv[1:])' "${SERVER_ARGV[@]}"
  ) </dev/null >>"${SERVER_LOG[$i]}" 2>&1 8>&- 9>&- &
  SERVER_PID[i]=$!
  disown "$!"  # no "Killed" line from bash when one has to be killed
  SERVER_PORT[i]=$port
  SERVER_STARTED_AT[i]=$SECONDS
  SERVER_TRIES[i]=$(( ${SERVER_TRIES[$i]:-0} + 1 ))
}

# A server's process group; or, in the moment before it has made its group, the process itself.
server_is_alive() {
  [ -n "${SERVER_PID[$1]:-}" ] && { kill -0 -- "-${SERVER_PID[$1]}" || kill -0 "${SERVER_PID[$1]}"; } 2>/dev/null
}

signal_server() {
  [ -z "${SERVER_PID[$2]:-}" ] || kill "-$1" -- "-${SERVER_PID[$2]}" 2>/dev/null || kill "-$1" "${SERVER_PID[$2]}" 2>/dev/null || true
}

# Stops the servers given after "stop" (each one's stop signal) or KILL (for one that never came up):
# that signal to each process group, SIGKILL to what is left after STOP_TIMEOUT.
stop_servers() {
  local how=$1 i n=0 left
  shift
  for i in "$@"; do
    if [ "$how" = stop ]; then signal_server "${SERVER_STOP_SIGNAL[$i]}" "$i"; else signal_server "$how" "$i"; fi
  done
  while :; do
    left=""
    for i in "$@"; do server_is_alive "$i" && left="$left $i"; done
    if [ -z "$left" ] || [ "$n" -ge $((STOP_TIMEOUT * 10)) ]; then break; fi
    sleep 0.1
    n=$((n + 1))
  done
  for i in $left; do
    note "${SERVER_NAME[$i]} did not stop within ${STOP_TIMEOUT}s of SIG${SERVER_STOP_SIGNAL[$i]}; killing it"
    signal_server KILL "$i"
  done
  for i in "$@"; do SERVER_PID[i]=""; done
}

server_failed() {
  local i=$1
  printf 'servers.sh: error: %s %s. Last lines of %s:\n' "${SERVER_NAME[$i]}" "$2" "${SERVER_LOG[$i]}" >&2
  tail -n 25 "${SERVER_LOG[$i]}" | sed 's/^/    /' >&2
  stop_servers KILL "$i"  # what is left of it never came up (the EXIT trap stops the others)
  exit 1
}

# Polls until server $1 has bound its port and answers 200 on its probe URL. Exit status: 0 up,
# 2 the port was taken, 3 the server exited, 4 out of time (after printing the last failed probe's error).
# An https URL is probed without checking its certificate, unless a CA file is given: then the certificate
# must be valid for the URL's host and issued by that CA. With an identity file, the probe presents it.
WAIT_PY='
import os, ssl, sys, time, urllib.request

url, pid, log, marker, timeout, ca_file, identity_file, proxy = sys.argv[1:]
pid, deadline = int(pid), time.monotonic() + float(timeout)
if ca_file:
    context = ssl.create_default_context(cafile=ca_file)
else:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
if identity_file:
    context.load_cert_chain(identity_file)
opener = urllib.request.build_opener(  # never via a proxy, unless it is the proxy being probed
    urllib.request.ProxyHandler({"http": proxy} if proxy else {}), urllib.request.HTTPSHandler(context=context))
last_error = None

def alive():
    try:
        os.kill(pid, 0)
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except ProcessLookupError:
        return False
    except OSError:  # no /proc
        return True

def main():
    global last_error
    started, next_note = time.monotonic(), time.monotonic() + 10
    while True:
        if time.monotonic() > next_note:  # never silent for long
            print("servers.sh: still waiting for %s (%d s)" % (url, time.monotonic() - started), file=sys.stderr)
            next_note += 10
        try:
            with open(log, errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        lowered = text.lower()
        if "address already in use" in lowered or "connection in use" in lowered or "could not create listening sockets" in lowered:
            return 2
        if marker in text:
            try:
                with opener.open(url, timeout=2) as response:
                    if response.status == 200:
                        return 0
            except Exception as error:
                last_error = error
        if not alive():
            return 3
        if time.monotonic() > deadline:
            if last_error is not None:
                print("servers.sh: the last probe of %s failed: %s" % (url, last_error), file=sys.stderr)
            return 4
        time.sleep(0.1)

sys.exit(main())
'

start_servers() {
  mkdir -p "$LOG_DIR"
  # Fixed log names and nginx and certificate folders, unless another servers.sh in this checkout is running
  # and using them. (Without flock to tell, the folders are always this run's own: another run would empty
  # them.)
  local suffix="" dir_suffix="-$$" i status remaining
  if command -v flock >/dev/null 2>&1; then
    exec 8>"$LOG_DIR/.lock"
    if flock -n 8; then dir_suffix=""; else suffix="-$$"; fi
  fi
  NGINX_DIR=$NGINX_DIRS/run$dir_suffix
  TLS_DIR=$TLS_DIRS/run$dir_suffix
  OAUTH_PROVIDER_DIR=$OAUTH_PROVIDER_DIRS/run$dir_suffix
  PROXY_DIR=$PROXY_DIRS/run$dir_suffix
  note "preparing nginx, the test certificates, the OAuth provider's database and the proxies"
  prepare_nginx_dir
  prepare_tls_dir
  prepare_oauth_provider_dir
  prepare_proxy_dir
  for i in "${!SERVER_NAME[@]}"; do
    SERVER_LOG[i]="$LOG_DIR/${SERVER_NAME[$i]}$suffix.log"
    launch_server "$i"
  done
  for i in "${!SERVER_NAME[@]}"; do
    while :; do
      remaining=$(( SERVER_STARTED_AT[i] + READY_TIMEOUT - SECONDS ))
      [ "$remaining" -gt 0 ] || remaining=1
      run_child helper "$VENV/bin/python" -c "$WAIT_PY" "$(probe_url "$i")" \
        "${SERVER_PID[$i]}" "${SERVER_LOG[$i]}" "$(bound_marker "$i")" "$remaining" "$(probe_ca_file "$i")" \
        "$(probe_identity_file "$i")" "$(probe_proxy "$i")"
      status=$CHILD_STATUS
      case $status in
        0) [ $((SECONDS - SERVER_STARTED_AT[i])) -lt 5 ] ||
             note "${SERVER_NAME[$i]} is up after $((SECONDS - SERVER_STARTED_AT[i])) s"
           break ;;
        2) [ "${SERVER_TRIES[$i]}" -lt "$PORT_TRIES" ] ||
             server_failed "$i" "found its port taken on each of $PORT_TRIES tries"
           note "port ${SERVER_PORT[$i]} was taken before ${SERVER_NAME[$i]} could bind it; trying another"
           stop_servers KILL "$i"  # (gunicorn handles SIGTERM only after its 5 s of bind retries)
           launch_server "$i" ;;
        3) server_failed "$i" "exited while starting" ;;
        4) server_failed "$i" "did not answer $(probe_url "$i") within ${READY_TIMEOUT}s" ;;
        *) server_failed "$i" "could not be checked (readiness probe exited with $status)" ;;
      esac
    done
  done
  export HTTPBIN_URL OIDC_ISSUER_URL OIDC_LONG_LIVED_ISSUER_URL NGINX_URL NGINX_H2_URL TLS_SELF_SIGNED_URL \
    TLS_EXPIRED_URL TLS_WRONG_NAME_URL TLS_TRUSTED_URL TLS_CLIENT_AUTH_URL TLS_CA_FILE DOWNLOADS_URL EVENT_STREAM_URL OAUTH_PROVIDER_URL \
    PROXY_URL PROXY_LOG PROXY_AUTH_URL PROXY_AUTH_USERNAME PROXY_AUTH_PASSWORD PROXY_AUTH_LOG
  HTTPBIN_URL=$(server_url 0)
  OIDC_ISSUER_URL=$(server_url 1)
  OIDC_LONG_LIVED_ISSUER_URL=$(server_url "$OIDC_LONG_LIVED_SERVER")
  NGINX_URL=$(server_url 2)
  NGINX_H2_URL=https://127.0.0.1:$NGINX_H2_PORT
  TLS_SELF_SIGNED_URL=$(server_url 3)
  TLS_EXPIRED_URL=$(server_url 4)
  TLS_WRONG_NAME_URL=$(server_url 5)
  TLS_TRUSTED_URL=$(server_url 6)
  TLS_CLIENT_AUTH_URL=$(server_url "$TLS_CLIENT_AUTH_SERVER")
  TLS_CA_FILE=$TLS_DIR/ca.pem
  DOWNLOADS_URL=$(server_url "$DOWNLOADS_SERVER")
  EVENT_STREAM_URL=$(server_url "$EVENT_STREAM_SERVER")
  OAUTH_PROVIDER_URL=$(server_url "$OAUTH_PROVIDER_SERVER")
  PROXY_URL=$(server_url "$PROXY_SERVER")
  PROXY_LOG=${SERVER_LOG[$PROXY_SERVER]}
  PROXY_AUTH_URL=$(server_url "$PROXY_AUTH_SERVER")
  PROXY_AUTH_LOG=${SERVER_LOG[$PROXY_AUTH_SERVER]}
}

# --- running and stopping -------------------------------------------------------------------

# Runs "$@" (after a first argument, helper or command) in the background and waits for it, so that a
# signal ends the wait at once (for a foreground child, bash holds a trap until the child exits). Sets
# CHILD_STATUS; exits if a signal came. Bash starts a background child with Ctrl-C (SIGINT) ignored and
# stdin from /dev/null: a helper keeps that, as Ctrl-C is this script's to handle; a command gets the
# default Ctrl-C behaviour and this shell's stdin (when it has one) back.
run_child() {
  [ -z "$CAUGHT_SIGNAL" ] || exit_for_signal
  CHILD_KIND=$1
  shift
  if [ "$CHILD_KIND" = helper ]; then
    "$@" </dev/null 8>&- 9>&- &
  elif { : <&0; } 2>/dev/null; then
    ( trap - INT QUIT; exec "$@" ) <&0 8>&- 9>&- &
  else
    ( trap - INT QUIT; exec "$@" ) </dev/null 8>&- 9>&- &
  fi
  CHILD_PID=$!
  CHILD_STATUS=0
  [ -n "$CAUGHT_SIGNAL" ] || wait "$CHILD_PID" || CHILD_STATUS=$?
  [ -z "$CAUGHT_SIGNAL" ] || exit_for_signal
  CHILD_PID=""
}

# The signal trap only takes note and passes SIGTERM on to the child (not Ctrl-C to a command, which got
# it from the terminal too); the main flow then stops the child and exits, and the EXIT trap stops the
# servers. (Waiting for children inside a trap that interrupted `wait` can hang bash.)
on_signal() {
  [ -n "$CAUGHT_SIGNAL" ] || note "got SIG$1; stopping"
  CAUGHT_SIGNAL=$1
  CAUGHT_STATUS=$2
  if [ -n "$CHILD_PID" ] && { [ "$1" != INT ] || [ "$CHILD_KIND" = helper ]; }; then
    kill -TERM "$CHILD_PID" 2>/dev/null || true
  fi
}

exit_for_signal() {
  stop_child
  exit "$CAUGHT_STATUS"
}

# Stops the child run_child was waiting for, if any. After a Ctrl-C, which a command got too, the command
# first has 2 s to finish by itself; then SIGTERM, and SIGKILL after STOP_TIMEOUT.
stop_child() {
  [ -n "$CHILD_PID" ] || return 0
  local n=0
  if [ "$CHILD_KIND" = command ] && [ "$CAUGHT_SIGNAL" = INT ]; then
    while kill -0 "$CHILD_PID" 2>/dev/null && [ "$n" -lt 20 ]; do sleep 0.1; n=$((n + 1)); done
  fi
  n=0
  disown "$CHILD_PID" 2>/dev/null || true  # no "Killed" line from bash if it has to be killed
  if kill -TERM "$CHILD_PID" 2>/dev/null; then
    while kill -0 "$CHILD_PID" 2>/dev/null && [ "$n" -lt $((STOP_TIMEOUT * 10)) ]; do sleep 0.1; n=$((n + 1)); done
    if kill -KILL "$CHILD_PID" 2>/dev/null && [ "$CHILD_KIND" = command ]; then
      note "the command did not stop within ${STOP_TIMEOUT}s of SIGTERM; killed it"
    fi
  fi
  CHILD_PID=""  # no `wait`: bash reaps it anyway, and waiting again for a child whose wait a signal cut
                # short makes bash 5.2 wait for any child instead, here the servers
}

on_exit() {
  local status=$?
  set +e
  trap '' INT TERM HUP
  stop_child
  stop_servers stop "${!SERVER_NAME[@]}"
  exit "$status"
}

is_seconds() { case $1 in ''|*[!0-9]*|0*) return 1 ;; esac; }

main() {
  local command=${1:-} i
  [ $# -eq 0 ] || shift
  case $command in
    install)
      [ $# -eq 0 ] || { usage >&2; exit 2; }
      install_venv
      install_nginx
      install_tinyproxy ;;
    run|start)
      if [ "$command" = run ]; then
        [ "${1:-}" != -- ] || shift
        [ $# -gt 0 ] || { usage >&2; exit 2; }
      else
        [ $# -eq 0 ] || { usage >&2; exit 2; }
      fi
      is_seconds "${OIDC_TOKEN_LIFETIME:-1}" ||
        die "OIDC_TOKEN_LIFETIME must be a whole number of seconds > 0, not '$OIDC_TOKEN_LIFETIME'"
      is_seconds "$READY_TIMEOUT" ||
        die "SERVERS_READY_TIMEOUT must be a whole number of seconds > 0, not '$READY_TIMEOUT'"
      install_venv
      install_nginx
      install_tinyproxy
      trap on_exit EXIT
      trap 'on_signal INT 130' INT
      trap 'on_signal TERM 143' TERM
      trap 'on_signal HUP 129' HUP
      start_servers
      note "httpbin at $HTTPBIN_URL, oidc-provider-mock at $OIDC_ISSUER_URL (${OIDC_TOKEN_LIFETIME:-3600} s tokens)" \
        "and at $OIDC_LONG_LIVED_ISSUER_URL (3600 s tokens), nginx at $NGINX_URL and $NGINX_H2_URL (HTTP/2)" \
        "(logs: ${SERVER_LOG[0]#"$ROOT"/}, ${SERVER_LOG[1]#"$ROOT"/}," \
        "${SERVER_LOG[$OIDC_LONG_LIVED_SERVER]#"$ROOT"/}, ${SERVER_LOG[2]#"$ROOT"/};" \
        "nginx's folder: ${NGINX_DIR#"$ROOT"/})"
      note "HTTPS with test certificates: self-signed at $TLS_SELF_SIGNED_URL, expired at $TLS_EXPIRED_URL," \
        "wrong name at $TLS_WRONG_NAME_URL, trusted by ${TLS_CA_FILE#"$ROOT"/} at $TLS_TRUSTED_URL," \
        "requiring a client certificate at $TLS_CLIENT_AUTH_URL" \
        "(logs: ${LOG_DIR#"$ROOT"/}/tls-*.log)"
      note "django-oauth-toolkit at $OAUTH_PROVIDER_URL (issuer $OAUTH_PROVIDER_URL/o; log:" \
        "${SERVER_LOG[$OAUTH_PROVIDER_SERVER]#"$ROOT"/}; database and key: ${OAUTH_PROVIDER_DIR#"$ROOT"/})"
      note "tinyproxy at $PROXY_URL, and asking for credentials at $PROXY_AUTH_URL (logs: ${PROXY_LOG#"$ROOT"/}," \
        "${PROXY_AUTH_LOG#"$ROOT"/})"
      if [ "$command" = start ]; then
        printf 'export HTTPBIN_URL=%s\nexport OIDC_ISSUER_URL=%s\nexport OIDC_LONG_LIVED_ISSUER_URL=%s\n' \
          "$HTTPBIN_URL" "$OIDC_ISSUER_URL" "$OIDC_LONG_LIVED_ISSUER_URL"
        printf 'export NGINX_URL=%s\nexport NGINX_H2_URL=%s\n' "$NGINX_URL" "$NGINX_H2_URL"
        printf 'export TLS_SELF_SIGNED_URL=%s\nexport TLS_EXPIRED_URL=%s\nexport TLS_WRONG_NAME_URL=%s\n' \
          "$TLS_SELF_SIGNED_URL" "$TLS_EXPIRED_URL" "$TLS_WRONG_NAME_URL"
        printf 'export TLS_TRUSTED_URL=%s\nexport TLS_CLIENT_AUTH_URL=%s\nexport TLS_CA_FILE=%q\n' \
          "$TLS_TRUSTED_URL" "$TLS_CLIENT_AUTH_URL" "$TLS_CA_FILE"
        printf 'export DOWNLOADS_URL=%s\nexport EVENT_STREAM_URL=%s\n' "$DOWNLOADS_URL" "$EVENT_STREAM_URL"
        printf 'export OAUTH_PROVIDER_URL=%s\n' "$OAUTH_PROVIDER_URL"
        printf 'export PROXY_URL=%s\nexport PROXY_LOG=%q\nexport PROXY_AUTH_URL=%s\nexport PROXY_AUTH_LOG=%q\n' \
          "$PROXY_URL" "$PROXY_LOG" "$PROXY_AUTH_URL" "$PROXY_AUTH_LOG"
        printf 'export PROXY_AUTH_USERNAME=%s\nexport PROXY_AUTH_PASSWORD=%s\n' "$PROXY_AUTH_USERNAME" "$PROXY_AUTH_PASSWORD"
        note "press Ctrl-C to stop"
        while :; do
          for i in "${!SERVER_NAME[@]}"; do server_is_alive "$i" || server_failed "$i" "stopped unexpectedly"; done
          run_child helper sleep 1
        done
      fi
      run_child command "$@"
      for i in "${!SERVER_NAME[@]}"; do
        server_is_alive "$i" || note "warning: ${SERVER_NAME[$i]} exited while the command ran; see ${SERVER_LOG[$i]}"
      done
      exit "$CHILD_STATUS" ;;
    -h|--help|help)
      usage ;;
    *)
      usage >&2
      exit 2 ;;
  esac
}

main "$@"
