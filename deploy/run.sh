#!/usr/bin/env bash
# Start N app processes (`streamlit run app.py`) on consecutive local ports and HAProxy in front
# of them, with cookie affinity (deploy/haproxy.cfg).  Browsers connect to the proxy only.
# Everything stops when this script stops (Ctrl-C, SIGTERM, or any one of the processes exiting).
#
#   deploy/run.sh [N]            N app processes (default: PUFFER_PROCESSES, else the number of cores)
#
# Environment (all optional):
#   PUFFER_PORT=8501             where browsers connect (the proxy)
#   PUFFER_BIND=0.0.0.0          the proxy's address (127.0.0.1: this machine only)
#   PUFFER_APP_PORT=8601         port of the first app process; the others follow (127.0.0.1 only)
#   STREAMLIT_SERVER_COOKIE_SECRET  one secret for every process (generated when unset)
#   PYTHON=python                the interpreter that has the requirements installed
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-${PUFFER_PROCESSES:-$(nproc)}}
if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: deploy/run.sh [N]  (N = number of app processes, a whole number ≥ 1; got '$N')" >&2
    exit 2
fi
export PUFFER_PORT=${PUFFER_PORT:-8501}
export PUFFER_BIND=${PUFFER_BIND:-0.0.0.0}
APP_PORT=${PUFFER_APP_PORT:-8601}
PYTHON=${PYTHON:-python}
export PATH="$PATH:/usr/sbin:/usr/local/sbin"  # where Debian puts haproxy
if ! command -v haproxy >/dev/null 2>&1; then
    echo "deploy/run.sh needs HAProxy: apt-get install -y haproxy" >&2
    exit 3
fi

# Signed cookies must verify on whichever process a browser reaches: one secret for all.
if [[ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]]; then
    STREAMLIT_SERVER_COOKIE_SECRET=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')
fi
export STREAMLIT_SERVER_COOKIE_SECRET
# Behind the proxy: no file watching, no usage statistics, no browser to open.  CORS and XSRF
# protection stay on (the proxy passes the browser's Host and Origin through unchanged).
export STREAMLIT_SERVER_HEADLESS=true
export STREAMLIT_SERVER_FILE_WATCHER_TYPE=none
export STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
export STREAMLIT_SERVER_ENABLE_CORS=true
export STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION=true

RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pufferfish-lab.XXXXXX")
PIDS=()
WAITER=
cleanup() {
    trap - EXIT INT TERM
    for pid in ${WAITER:+"$WAITER"} "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$RUN_DIR"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

CONFIG="$RUN_DIR/haproxy.cfg"
cp deploy/haproxy.cfg "$CONFIG"
for i in $(seq 1 "$N"); do
    port=$((APP_PORT + i - 1))
    "$PYTHON" -m streamlit run app.py --server.port "$port" --server.address 127.0.0.1 \
        > >(sed -u "s/^/[app$i] /") 2>&1 &
    PIDS+=($!)
    echo "$!" > "$RUN_DIR/app$i.pid"
    echo "    server app$i 127.0.0.1:$port cookie app$i check inter 2s fall 3 rise 1" >> "$CONFIG"
done

# wait until every process answers its health check, then open the proxy (in the background,
# so that a signal stops this script at once)
"$PYTHON" - "$APP_PORT" "$N" <<'PY' &
import sys, time, urllib.request
first, count = int(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 120
for port in range(first, first + count):
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"app process on port {port} did not start within 120 s")
        time.sleep(0.2)
PY
WAITER=$!
wait "$WAITER"
WAITER=
haproxy -db -f "$CONFIG" > >(sed -u "s/^/[proxy] /") 2>&1 &
PIDS+=($!)
echo "$!" > "$RUN_DIR/proxy.pid"
echo "Pufferfish Lab: $N app processes (ports $APP_PORT-$((APP_PORT + N - 1))) behind HAProxy at http://${PUFFER_BIND}:${PUFFER_PORT} (pids in $RUN_DIR)"

# stop everything as soon as one process exits
set +e
wait -n "${PIDS[@]}"
status=$?
echo "deploy/run.sh: a process exited (status $status); stopping the others" >&2
exit "$status"
