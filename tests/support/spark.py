"""Spark for the tests: one small local session, and a Spark Connect server started from the pyspark package.

The Connect server is a separate JVM (``spark-submit`` of pyspark's own ``SparkConnectServer`` class, as
``sbin/start-connect-server.sh`` runs it) listening on a free loopback port; the test process is only its
gRPC client, as a user's notebook is against a cluster.  Both are configured for tiny inputs: one core,
one shuffle partition, no adaptive planning, no whole-stage code generation, no UI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.servers import free_port, unavailable

# A JVM that lives a minute on tiny inputs: the quick compiler only (the optimising one spends more CPU than it saves),
# and the serial collector (no collector threads competing for the two cores)
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
START_TIMEOUT = 240.0  # a ceiling: a JVM starting on a busy two-core machine
SMALL = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.sql.adaptive.enabled": "false",  # tiny inputs: planning once is faster
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.session.timeZone": "America/New_York",  # queries must not depend on it
    "spark.driver.extraJavaOptions": QUICK_JVM,
}


def spark_home() -> Path:
    """The pyspark package's folder (it holds bin/, sbin/ and jars/ of a full Spark)."""
    try:
        import pyspark
    except ImportError:
        unavailable("Spark test", "pyspark is not installed (pip install -r requirements-dev.txt)")
    return Path(pyspark.__file__).parent


def need_java() -> None:
    if shutil.which("java") is None:
        unavailable("Spark test", "Java is not installed (apt-get install openjdk-17-jre-headless)")


@contextmanager
def local_session() -> Iterator[Any]:
    """One classic local Spark session (the JVM starts once)."""
    need_java()
    spark_home()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName("puffer-tests").config("spark.driver.memory", "512m")
    for key, value in SMALL.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    try:
        yield session
    finally:
        session.stop()


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start_connect_server(port: int, log: Any, master: str = "local[1]", conf: dict[str, str] | None = None
                         ) -> subprocess.Popen[bytes]:
    """``spark-submit`` of pyspark's SparkConnectServer on 127.0.0.1:``port``, in its own process group."""
    home = spark_home()
    settings = {
        **SMALL,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        **(conf or {}),
    }
    command = [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
               "--name", "puffer-connect", "--master", master, "--driver-memory", "512m"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def wait_listening(port: int, process: subprocess.Popen[bytes], what: str, timeout: float = START_TIMEOUT) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before listening on port {port}")
        if listening(port):
            return
        time.sleep(0.25)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a process this module started, and its children (its own process group), by its id."""
    if process.poll() is None:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


@contextmanager
def connect_session(log_path: Path, master: str = "local[1]", conf: dict[str, str] | None = None) -> Iterator[Any]:
    """A Spark Connect server started from the pyspark package on loopback, and a client session to it."""
    need_java()
    try:
        import grpc  # noqa: F401  (pyspark[connect]'s client)
    except ImportError:
        unavailable("Spark Connect test", "the Connect client is not installed (pip install -r requirements-dev.txt)")
    port = free_port()
    with open(log_path, "wb") as log:
        process = start_connect_server(port, log, master, conf)
        try:
            wait_listening(port, process, "the Spark Connect server")
            from pyspark.sql import SparkSession

            session = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
            try:
                yield session
            finally:
                session.stop()
        finally:
            stop(process)
