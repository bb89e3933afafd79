#!/usr/bin/env bash
# A Spark standalone cluster from the pyspark package: one master, N workers and (optionally) a Spark Connect server
# whose jobs run on the workers.  Recipe and settings: deploy/spark/README.md.
#
#   deploy/spark/cluster.sh start     # master, workers, Connect server; prints the URLs
#   deploy/spark/cluster.sh status    # which of them run
#   deploy/spark/cluster.sh stop      # ends exactly the processes that start began (by their pid files)
set -euo pipefail

HOST=${SPARK_CLUSTER_HOST:-127.0.0.1}          # the address every process binds to and announces
MASTER_PORT=${SPARK_MASTER_PORT:-7077}
MASTER_UI_PORT=${SPARK_MASTER_UI_PORT:-8080}
WORKERS=${SPARK_WORKERS:-2}                     # how many workers
WORKER_CORES=${SPARK_WORKER_CORES:-1}           # cores each worker offers
WORKER_MEMORY=${SPARK_WORKER_MEMORY:-1g}        # memory each worker offers to executors
EXECUTOR_MEMORY=${SPARK_EXECUTOR_MEMORY:-512m}  # memory of each executor (≤ WORKER_MEMORY)
CONNECT_PORT=${SPARK_CONNECT_PORT:-15002}       # 0: no Connect server
STATE=${SPARK_CLUSTER_DIR:-${TMPDIR:-/tmp}/puffer-spark-cluster}  # pid files, logs, workers' scratch space
PYTHON=${PYTHON:-python3}

SPARK_HOME=${SPARK_HOME:-$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}
export SPARK_HOME SPARK_LOCAL_IP=$HOST SPARK_LOG_DIR=$STATE/logs PYSPARK_PYTHON=${PYSPARK_PYTHON:-$PYTHON}
MASTER_URL=spark://$HOST:$MASTER_PORT

launch() {  # name, command…: in the background, in its own session, with a pid file
    local name=$1
    shift
    mkdir -p "$STATE/logs" "$STATE/pids"
    setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
    echo $! >"$STATE/pids/$name.pid"
}

wait_port() {  # port, what: until something listens there (240 s at most)
    for _ in $(seq 960); do
        if (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; then return 0; fi
        sleep 0.25
    done
    echo "$2 did not listen on $HOST:$1; see $STATE/logs" >&2
    return 1
}

start() {
    command -v java >/dev/null || { echo "Java 17 is needed (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
    launch master "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
        --host "$HOST" --port "$MASTER_PORT" --webui-port "$MASTER_UI_PORT"
    wait_port "$MASTER_PORT" "the master"
    for i in $(seq "$WORKERS"); do
        mkdir -p "$STATE/work-$i"
        launch "worker-$i" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
            --host "$HOST" --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" --work-dir "$STATE/work-$i" \
            --webui-port 0 "$MASTER_URL"
    done
    echo "master: $MASTER_URL (web UI and JSON status: http://$HOST:$MASTER_UI_PORT/json/), $WORKERS worker(s)"
    if [ "$CONNECT_PORT" != 0 ]; then
        launch connect "$SPARK_HOME/bin/spark-submit" --class org.apache.spark.sql.connect.service.SparkConnectServer \
            --name puffer-connect --master "$MASTER_URL" --executor-memory "$EXECUTOR_MEMORY" \
            --conf "spark.connect.grpc.binding.address=$HOST" --conf "spark.connect.grpc.binding.port=$CONNECT_PORT" \
            --conf "spark.driver.host=$HOST" --conf "spark.driver.bindAddress=$HOST" \
            --conf "spark.local.dir=$STATE/scratch" --conf spark.ui.enabled=false
        wait_port "$CONNECT_PORT" "the Spark Connect server"
        echo "Spark Connect: sc://$HOST:$CONNECT_PORT"
    fi
}

stop() {
    [ -d "$STATE/pids" ] || return 0
    for file in "$STATE"/pids/*.pid; do
        [ -e "$file" ] || continue
        pid=$(cat "$file")
        kill -TERM -- "-$pid" 2>/dev/null || true  # its own session: the JVM and the launcher script
        rm -f "$file"
    done
}

status() {
    for file in "$STATE"/pids/*.pid; do
        [ -e "$file" ] || { echo "nothing started from $STATE"; return 0; }
        pid=$(cat "$file")
        if kill -0 "$pid" 2>/dev/null; then state=running; else state=stopped; fi
        echo "$(basename "$file" .pid): pid $pid $state"
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
