"""``textcw train --shards/--combine/--backend/--scheduler/--stream`` from the command line."""

from __future__ import annotations

import json
import socket

import pytest

from cli_run import one_line_error, run
from textcw.persist import read_manifest


SMALL = ["--featurizer-param", "n_features=16384"]


@pytest.mark.parametrize("argv,code,fragment", [
    (["--combine", "kl"], 2, "--combine applies to shard training; add --shards N"),
    (["--backend", "dask"], 2, "--backend applies to shard training"),
    (["--shards", "2", "--scheduler", "127.0.0.1:8786"], 2, "add --backend dask"),
    (["--shards", "2", "--combine", "average"], 2, "valid combination method names: kl, uniform"),
    (["--shards", "2", "--backend", "spark"], 2, "valid backend names: dask, local"),
    (["--shards", "0"], 2, "--shards 0 is invalid; give 1 to 10,000 shards"),
    (["--shards", "20000000"], 2, "--shards 20000000 is invalid; give 1 to 10,000 shards"),
    (["--stream", "--featurizer", "binary-bow"], 2, "use --featurizer hashing"),
    (["--stream", "--chunk-size", "0"], 2, "--chunk-size 0 is invalid"),
    (["--shards", "2", "--learner", "perceptron"], 2, "use method='uniform'"),
    (["--shards", "2001"], 1, "use at most 2000 shards"),
    (["--corpus", "synthetic-text:lots", "--stream"], 2, "synthetic-text:N"),  # typed wrong: a usage error
])
def test_bad_scale_options_exit_with_one_line(capsys, argv, code, fragment):
    base = {"--corpus": "synthetic-text:2000", "--learner": "cw-var"}
    for key in list(base):
        if key in argv:
            base.pop(key)
    args = [x for pair in base.items() for x in pair] + argv
    got, out, err = run(capsys, "train", *args)
    assert (got, out) == (code, "")
    assert fragment in one_line_error(err)


def test_unreachable_scheduler(capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = run(capsys, "train", "--corpus", "synthetic-text:1000", "--learner", "cw-var",
                       "--shards", "2", "--backend", "dask", "--scheduler", f"127.0.0.1:{port}")
    assert code == 1 and f"cannot reach the Dask scheduler at 127.0.0.1:{port}" in one_line_error(err)


def test_stream_json(capsys):
    code, out, _ = run(capsys, "train", "--corpus", "synthetic-text:3000", "--learner", "cw-var",
                       "--stream", "--chunk-size", "1000", "--json", *SMALL)
    result = json.loads(out)
    assert code == 0 and result["mode"] == "stream" and result["featurizer"] == "hashing"
    assert (result["n_train"], result["n_test"], result["passes"]) == (3000, 600, 1)
    # the same model as train_stream (67.3% measured, chance 50%)
    from textcw.scale import train_stream

    direct = train_stream("synthetic-text:3000", "cw-var", chunk_size=1000, featurizer_params={"n_features": 16384})
    assert result["accuracy"] == direct.accuracy and result["accuracy"] > 0.63
    assert result["documents_per_second"] > 0


def test_shards_on_a_local_dask_cluster_save_and_predict(capsys, tmp_path):
    model = tmp_path / "sharded.joblib"
    code, out, _ = run(capsys, "train", "--corpus", "synthetic-text:3000", "--learner", "arow",
                       "--shards", "3", "--combine", "uniform", "--backend", "dask", "--workers", "2",
                       "--epochs", "2", "--out", str(model), *SMALL)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("synthetic-text:3000  arow  accuracy")
    assert lines[1].startswith("3 shards combined by uniform (dask, 2 workers)")
    manifest = read_manifest(model)
    assert manifest["components"]["training"] == {"mode": "shards", "shards": 3, "combine": "uniform",
                                                  "stream": False}
    doc = tmp_path / "doc.txt"
    doc.write_text("bebu bebe reyu caba beso lawi")
    code, out, _ = run(capsys, "predict", str(model), str(doc))
    assert code == 0 and out in (f"{doc}\tneg\n", f"{doc}\tpos\n")


def test_kl_combination_with_the_mean_of_the_precisions(capsys, tmp_path):
    model = tmp_path / "m.textcw-model"
    task = ["--corpus", "synthetic-text:2000", "--learner", "cw-var", *SMALL]
    code, out, err = run(capsys, "train", *task, "--shards", "2", "--workers", "1", "--precision", "mean",
                         "--out", model, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["combine"] == "kl" and result["precision"] == "mean"
    assert read_manifest(model)["components"]["training"]["precision"] == "mean"
    code, out, err = run(capsys, "train", *task, "--precision", "mean")
    assert code == 2 and "--precision applies to shard training; add --shards N" in one_line_error(err)
    code, out, err = run(capsys, "train", *task, "--shards", "2", "--combine", "uniform", "--precision", "mean")
    assert code == 2 and "precision='mean' applies to method='kl' only" in one_line_error(err)
