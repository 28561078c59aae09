#!/usr/bin/env bash
# A real two-node Ray cluster on this one machine, for trying and testing `--executor ray
# --ray-address ADDR` (docs/ray.md). Both nodes are full Ray nodes (own raylet, object store,
# ports and temp dir); the head also runs the GCS.
#
#   scripts/ray_cluster.sh start    start the head node, then the second node; print the address
#                                   (with the head running and node2 killed: a new second node)
#   scripts/ray_cluster.sh env      print the `export` lines a driver needs (eval "$(... env)")
#   scripts/ray_cluster.sh status   what is running, and `ray status`
#   scripts/ray_cluster.sh stop     stop both nodes and remove the state directory
#   scripts/ray_cluster.sh kill node2   SIGKILL every process of one node (a lost machine)
#
# Settings (environment):
#   DATAFORGE_RAY_DIR   state directory: pids, logs, token, Ray temp dirs
#                       (default /tmp/dfray-$UID; keep it short: Ray's unix sockets live under it)
#   RAY_NODE_CPUS       CPUs each node offers (default 1)
#   RAY_OBJECT_STORE    object store bytes per node (default 200000000)
#   RAY_START_TIMEOUT   seconds to wait for each node (default 90)
#   PYTHON              the Python that has ray (default: the repo's .venv, else python3)
#
# Each node is one `ray start --block` in its own session (setsid): stop sends it SIGTERM (it
# stops its own processes at once: RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0), then SIGKILLs
# whatever is left of its session (workers included). It never runs `ray stop`, which would
# stop every Ray instance of this user on the machine. The cluster uses Ray's token
# authentication with a token of its own (RAY_AUTH_MODE=token, RAY_AUTH_TOKEN_PATH): a driver
# needs the lines `env` prints.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${DATAFORGE_RAY_DIR:-/tmp/dfray-$(id -u)}"
CPUS="${RAY_NODE_CPUS:-1}"
STORE="${RAY_OBJECT_STORE:-200000000}"
TIMEOUT="${RAY_START_TIMEOUT:-90}"
if [[ -z "${PYTHON:-}" ]]; then
    PYTHON=python3
    if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; fi
fi
RAY="$(dirname "$(command -v "$PYTHON")")/ray"
[[ -x "$RAY" ]] || RAY="$(command -v ray || true)"

die() { echo "ray_cluster: $*" >&2; exit 1; }

# a pid file holds the pid of a `ray start --block`, which is also its process group id
alive() { [[ -f "$DIR/$1.pid" ]] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

cluster_env() {
    export RAY_USAGE_STATS_ENABLED=0
    export RAY_AUTH_MODE=token
    export RAY_AUTH_TOKEN_PATH="$DIR/auth_token"
    export RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0
    unset RAY_ADDRESS RAY_AUTH_TOKEN
}

free_ports() {  # N free TCP ports (bound and released: a tiny race, fine on a test machine)
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

node_ports() {  # node_ports NAME: the ports Ray would otherwise take at fixed defaults
    local p
    read -r -a p <<<"$(free_ports 6)"
    echo "${p[0]}" >"$DIR/$1.port"
    echo "--node-manager-port=${p[0]} --object-manager-port=${p[1]}" \
        "--dashboard-agent-listen-port=${p[2]} --dashboard-agent-grpc-port=${p[3]}" \
        "--runtime-env-agent-port=${p[4]} --metrics-export-port=${p[5]}"
}

launch() {  # launch NAME ARGS...: `ray start --block ARGS` in its own session, in the background
    local name="$1"
    shift
    # setsid without --fork: the pid of the background job is the session and group leader
    setsid "$RAY" start --block --disable-usage-stats --num-cpus="$CPUS" \
        --object-store-memory="$STORE" --temp-dir="$DIR/$name" "$@" \
        </dev/null >"$DIR/$name.log" 2>&1 &
    echo $! >"$DIR/$name.pid"
}

alive_nodes() {  # node manager ports of the alive nodes the GCS knows (none if it cannot say)
    "$PYTHON" - "$(cat "$DIR/address")" <<'EOF' 2>/dev/null || true
import sys
from ray._raylet import GcsClient
nodes = GcsClient(address=sys.argv[1]).get_all_node_info(timeout=5).values()
print(" ".join(str(n.node_manager_port) for n in nodes if n.state == 0))  # 0: ALIVE
EOF
}

wait_for() {  # wait_for NAME WHAT COMMAND...: until COMMAND succeeds, NAME's process lives
    local name="$1" what="$2" t0=$SECONDS
    shift 2
    until "$@"; do
        if ! alive "$name"; then
            tail -n 20 "$DIR/$name.log" >&2 || true
            stop_all
            die "the $name node exited before $what"
        fi
        if ((SECONDS - t0 > TIMEOUT)); then
            tail -n 20 "$DIR/$name.log" >&2 || true
            stop_all
            die "no $what after ${TIMEOUT}s"
        fi
        sleep 0.5
    done
}

stop_node() {  # stop_node NAME [KILL]: SIGTERM its `ray start` first, unless KILL
    local name="$1" pid i
    [[ -f "$DIR/$name.pid" ]] || return 0
    pid="$(cat "$DIR/$name.pid")"
    if [[ -z "${2:-}" ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    # whatever is left of the node goes too: its session (setsid) holds the raylet, the agents
    # and the workers (each worker has its own process group, not its own session)
    for i in $(seq 50); do
        pkill -KILL -s "$pid" 2>/dev/null || break
        sleep 0.1
    done
    rm -f "$DIR/$name.pid"
}

stop_all() {
    stop_node node2
    stop_node head
}

write_env() {
    {
        echo "export RAY_ADDRESS=$(cat "$DIR/address")"
        echo "export RAY_AUTH_MODE=token"
        echo "export RAY_AUTH_TOKEN_PATH=$DIR/auth_token"
        echo "export RAY_USAGE_STATS_ENABLED=0"
    } >"$DIR/env"
}

start_node2() {
    # shellcheck disable=SC2046
    launch node2 --address="$(cat "$DIR/address")" $(node_ports node2)
    # this node2 is alive in the GCS (a killed node2 may still be listed alive for a while)
    joined() { [[ " $(alive_nodes) " == *" $(cat "$DIR/node2.port") "* ]]; }
    wait_for node2 "second node in the cluster" joined
}

cmd_start() {
    [[ -x "$RAY" ]] || die "no ray command next to $PYTHON (pip install 'dataforge[ray]')"
    if alive head; then
        if alive node2; then
            echo "already running"
        else
            cluster_env
            start_node2  # after `kill node2`: a new second node joins the head
        fi
        echo "address: $(cat "$DIR/address")"
        return 0
    fi
    stop_all  # what is left of an earlier cluster in this directory
    mkdir -p "$DIR"
    chmod 700 "$DIR"
    rm -rf "$DIR/head" "$DIR/node2" "$DIR/address" "$DIR/env"
    cluster_env
    [[ -s "$DIR/auth_token" ]] || (umask 077 && "$PYTHON" -c \
        "import secrets; print(secrets.token_hex(32), end='')" >"$DIR/auth_token")

    local p
    read -r -a p <<<"$(free_ports 2)"
    # shellcheck disable=SC2046
    launch head --head --port="${p[0]}" --include-dashboard=false \
        --dashboard-port="${p[1]}" $(node_ports head)
    wait_for head "head node address" test -s "$DIR/head/ray_current_cluster"
    cp "$DIR/head/ray_current_cluster" "$DIR/address"
    start_node2
    write_env
    echo "Ray cluster of 2 nodes (${CPUS} CPU each) at $(cat "$DIR/address")"
    echo "  first: eval \"\$($0 env)\"   (RAY_ADDRESS and token authentication)"
    echo "  then:  dataforge <pipeline> generate ... --executor ray --ray-address \$RAY_ADDRESS"
    echo "address: $(cat "$DIR/address")"
}

cmd_status() {
    local name
    for name in head node2; do
        if alive "$name"; then
            echo "$name: running (pid $(cat "$DIR/$name.pid"))"
        else
            echo "$name: stopped"
        fi
    done
    if alive head && [[ -f "$DIR/address" ]]; then
        cluster_env
        echo "address: $(cat "$DIR/address")"
        echo "alive nodes (node manager ports): $(alive_nodes)"
        "$RAY" status --address "$(cat "$DIR/address")" 2>/dev/null || true
    else
        return 1
    fi
}

case "${1:-}" in
start) cmd_start ;;
stop)
    stop_all
    rm -rf "$DIR"
    echo "stopped"
    ;;
status) cmd_status ;;
kill)
    # SIGKILL every process of one node at once, as if its machine vanished (for tests)
    [[ "${2:-}" == node2 || "${2:-}" == head ]] || die "usage: $0 kill node2|head"
    alive "$2" || die "$2 is not running"
    stop_node "$2" KILL
    echo "killed $2"
    ;;
env)
    [[ -f "$DIR/env" ]] || die "no cluster at $DIR: run '$0 start'"
    cat "$DIR/env"
    ;;
*)
    sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
