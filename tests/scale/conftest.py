"""Fixtures of the scale-out tests: small learned models, local Dask clusters on loopback, and a
gate at which shard tasks stop so that a test can kill a worker in a known state."""

from __future__ import annotations

import contextlib
import logging

import pytest

from gating import Gate
from textcw.scale import shards


@contextlib.contextmanager
def _local_cluster():
    """Two worker processes with one thread each, on 127.0.0.1 only: ``(address, client)``."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield cluster.scheduler_address, client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="session")
def dask_cluster():
    """A local cluster shared by the tests that leave its workers alone; yields
    ``(address, client)``. A test that kills a worker uses ``own_dask_cluster``."""
    with _local_cluster() as running:
        yield running


@pytest.fixture
def own_dask_cluster():
    """Like ``dask_cluster``, but started for one test and closed after it."""
    with _local_cluster() as running:
        yield running


@pytest.fixture
def shard_gate(tmp_path, monkeypatch):
    """Every shard task submitted during the test stops at a gate until ``gate.open()``."""
    folder = tmp_path / "gate"
    folder.mkdir()
    monkeypatch.setattr(shards, "SHARD_GATE", folder)
    gate = Gate(folder)
    yield gate
    gate.open()  # never leave a worker waiting


@pytest.fixture(params=["fork", "loky"])
def local_start(request, monkeypatch):
    """Each way the local backend starts its workers: forked from this process (where
    available) or joblib's loky processes."""
    from textcw.scale import forked

    if request.param == "fork" and not forked.fork_available():
        pytest.skip("workers are forked only on Linux")
    if request.param == "loky":
        monkeypatch.setattr(forked, "fork_available", lambda: False)
    return request.param
