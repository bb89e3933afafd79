"""Spark for the tests: one small local JVM that is both a classic session and a Spark Connect server.

The classic session runs in a JVM that pyspark starts and drives over py4j.  The same JVM serves Spark Connect
(``SparkConnectPlugin``, as pyspark's own ``local`` Connect mode and ``sbin/start-connect-server.sh`` start it)
on a free loopback port, and the test process is also its gRPC client, as a user's notebook is against a cluster:
one JVM start for both modes.  (``tests/test_spark_cluster.py`` runs a Connect server of its own, in front of a
standalone cluster.)  Both are configured for tiny inputs: one core, one shuffle partition, no adaptive planning,
no whole-stage code generation, no UI.
"""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.servers import unavailable

# A JVM that lives a minute on tiny inputs: the quick compiler only (the optimising one spends more CPU than it saves),
# and the serial collector (no collector threads competing for the two cores)
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
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
def local_session(connect_port: int | None = None) -> Iterator[Any]:
    """One classic local Spark session (the JVM starts once); with ``connect_port``, its JVM also serves Spark
    Connect on 127.0.0.1:``connect_port`` (:func:`connect_client` is a client of it)."""
    need_java()
    spark_home()
    from pyspark.sql import SparkSession

    settings = dict(SMALL)
    if connect_port is not None:
        settings |= {
            "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(connect_port),
        }
    builder = SparkSession.builder.master("local[1]").appName("puffer-tests").config("spark.driver.memory", "512m")
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    try:
        if connect_port is not None and not listening(connect_port):
            raise RuntimeError(f"the Spark Connect plugin does not listen on port {connect_port}")
        yield session
    finally:
        session.stop()


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def connect_client(port: int) -> Iterator[Any]:
    """A Spark Connect client session to the server on 127.0.0.1:``port``.

    Built with the Connect session's own builder: pyspark's generic one refuses a remote session while a classic
    session runs in the same process (this one does, as the server's JVM).
    """
    try:
        import grpc  # noqa: F401  (pyspark[connect]'s client)
    except ImportError:
        unavailable("Spark Connect test", "the Connect client is not installed (pip install -r requirements-dev.txt)")
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
    try:
        yield session
    finally:
        session.stop()
