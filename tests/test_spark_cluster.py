"""The standalone-cluster recipe (deploy/spark/cluster.sh, deploy/spark/README.md) run as written: a master, two
workers and a Spark Connect server whose jobs run on the workers' executors, all on loopback; load_stats through
Connect gives numpy's counts on a glob of Parquet files, and the master says that its two workers ran the job.

One cluster for the module, tiny input; without Java, pyspark or the Connect client the test is skipped locally and
fails in CI (CI=true).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from puffer_core.data.engines import load_stats
from puffer_core.data.readers import load_sequences
from tests.support.servers import free_port, unavailable
from tests.support.spark import QUICK_JVM, need_java, spark_home

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "deploy" / "spark" / "cluster.sh"


def _run(action: str, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", str(SCRIPT), action], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"cluster.sh {action} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """The recipe's cluster (2 workers × 1 core) and a Connect client session to it; the master's JSON status URL."""
    need_java()
    spark_home()
    try:
        import grpc  # noqa: F401  (pyspark[connect]'s client)
    except ImportError:
        unavailable("Spark cluster test", "the Connect client is not installed (pip install -r requirements-dev.txt)")
    state = tmp_path_factory.mktemp("cluster")
    ports = {name: str(free_port()) for name in ("SPARK_MASTER_PORT", "SPARK_MASTER_UI_PORT", "SPARK_CONNECT_PORT")}
    # JVMs that live a minute: the quick compiler only, for the daemons (Spark's SPARK_DAEMON_JAVA_OPTS) and for the
    # Connect server and its executors (a spark-defaults.conf of the test's own, through Spark's SPARK_CONF_DIR)
    conf = state / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("".join(f"spark.{who}.extraJavaOptions {QUICK_JVM}\n"
                                                      for who in ("driver", "executor")), encoding="utf-8")
    env = {**os.environ, **ports, "SPARK_CLUSTER_DIR": str(state), "SPARK_WORKERS": "2", "SPARK_WORKER_CORES": "1",
           "SPARK_WORKER_MEMORY": "768m", "SPARK_EXECUTOR_MEMORY": "512m", "PYTHON": sys.executable,
           "SPARK_CONF_DIR": str(conf), "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM}
    try:
        _run("start", env)
        from pyspark.sql import SparkSession

        session = SparkSession.builder.remote(f"sc://127.0.0.1:{ports['SPARK_CONNECT_PORT']}").getOrCreate()
        try:
            yield session, f"http://127.0.0.1:{ports['SPARK_MASTER_UI_PORT']}/json/"
        finally:
            session.stop()
    finally:
        _run("stop", env)


def test_load_stats_on_a_standalone_cluster_equals_numpy(spark: tuple[Any, str], tmp_path: Path) -> None:
    session, status_url = spark
    rng = np.random.default_rng(8)
    n = 3000
    frame = pd.DataFrame({"user": rng.integers(0, 60, n), "time": rng.permutation(n),
                          "state": rng.choice(["home", "work", "gym"], n), "country": rng.choice(["fr", "de"], n)})
    for i in range(3):
        part = frame.iloc[i * n // 3 : (i + 1) * n // 3]
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), tmp_path / f"part-{i}.parquet")
    got = load_stats(str(tmp_path / "part-*.parquet"), engine=session, group="country", windows=(4,))
    want = load_sequences(frame, group="country").stats(windows=(4,))
    assert got.same_counts(want) and got.summary() == want.summary()
    assert session.conf.get("spark.master").startswith("spark://127.0.0.1:")
    with urllib.request.urlopen(status_url, timeout=10) as response:
        status = json.load(response)
    assert status["aliveworkers"] == 2 and status["status"] == "ALIVE"
    apps = [a for a in status["activeapps"] if a["name"] == "puffer-connect"]
    assert apps and apps[0]["cores"] == 2  # one executor on each worker did the reading
