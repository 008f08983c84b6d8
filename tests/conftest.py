"""Shared fixtures. Tests that need a real corpus use ``data_home`` and fail when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from sparse_data import random_sparse


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The folder with the real corpora (``$TEXTCW_DATA``); its absence is a failure, not a skip."""
    env = os.environ.get("TEXTCW_DATA")
    assert env, "TEXTCW_DATA is not set; point it at the corpora folder (CI: ../shared/corpora)"
    path = Path(env)
    assert path.is_dir(), f"TEXTCW_DATA={env} is not a folder"
    return path


@pytest.fixture
def binary_problem():
    X = random_sparse(300, 40, 0.15, seed=1, empty_rows=(5, 17))
    w = np.random.default_rng(2).normal(size=40)
    y = np.where(X @ w + 0.3 * np.random.default_rng(3).normal(size=300) > 0, "pos", "neg")
    return X, y


@pytest.fixture
def multiclass_problem():
    X = random_sparse(400, 30, 0.2, seed=4, empty_rows=(3,))
    W = np.random.default_rng(5).normal(size=(30, 4))
    y = np.argmax(X @ W + 0.2 * np.random.default_rng(6).normal(size=(400, 4)), axis=1)
    return X, y
