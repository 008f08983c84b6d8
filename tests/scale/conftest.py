"""Fixtures of the scale-out tests: small learned models and a local Dask cluster on loopback."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def dask_cluster():
    """Two worker processes with one thread each, on 127.0.0.1 only; yields ``(address, client)``."""
    distributed = pytest.importorskip("distributed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield cluster.scheduler_address, client
    finally:
        client.close()
        cluster.close()
