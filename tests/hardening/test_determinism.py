"""The same command with the same seed writes a byte-identical model file.

Across processes with different hash seeds (string hashing, set order and object addresses
change between processes), through the CLI, and for every registered learner in process.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import textcw
from textcw.pipeline import assemble, make_featurizer, make_learner
from textcw.plugins import default_registries
from textcw.testing import make_documents
from hang import HANG_SECONDS

DOCS, LABELS = make_documents(25, random_state=0)


def train_in_subprocess(tmp_path, name, hash_seed, *argv):
    out = tmp_path / f"{name}-{hash_seed}.joblib"
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    proc = subprocess.run([sys.executable, "-m", "textcw.cli", "train", *argv, "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes()


@pytest.mark.corpus
def test_cli_training_on_a_corpus_is_byte_identical(data_home, tmp_path):
    argv = ("--corpus", "newsgroups:sci", "--learner", "cw-stdev", "--seed", "3", "--epochs", "1")
    first, second = (train_in_subprocess(tmp_path, "sci", h, *argv) for h in (1, 2))
    assert first == second


def test_cli_shard_training_is_byte_identical(tmp_path):
    argv = ("--corpus", "synthetic-text:800", "--learner", "arow", "--seed", "5", "--epochs", "1",
            "--featurizer-param", "n_features=4096", "--shards", "2", "--backend", "local")
    first, second = (train_in_subprocess(tmp_path, "shards", h, *argv) for h in (3, 4))
    assert first == second


def fitted(learner, seed):
    feat = make_featurizer("binary-bow")
    est = make_learner(learner)
    if "random_state" in est.get_params():
        est.set_params(random_state=seed)
    est.fit(feat.fit_transform(DOCS), LABELS)
    return assemble(feat, est, learner=learner, featurizer_name="binary-bow", featurizer_params=None,
                    corpus="toy")


@pytest.mark.parametrize("learner", sorted(default_registries().learners.names()))
def test_every_learner_saves_and_exports_the_same_bytes(learner, tmp_path):
    a, b = fitted(learner, 7), fitted(learner, 7)
    assert textcw.save(a, tmp_path / "a").read_bytes() == textcw.save(b, tmp_path / "b").read_bytes()
    assert (textcw.export_model(a, tmp_path / "a.x").read_bytes()
            == textcw.export_model(b, tmp_path / "b.x").read_bytes())
