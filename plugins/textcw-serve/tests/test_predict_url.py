"""`textcw predict --url` and `textcw.client`: the same answers as the local model."""

from __future__ import annotations

import pytest
from textcw.cli import main

import textcw.client
from serve_fixtures import save_model, thread_server, train_documents


def run(capsys, *args):
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_predict_url_prints_what_the_local_model_prints(tmp_path, capsys):
    model = save_model(tmp_path)
    docs, _ = train_documents(seed=5, n_per_class=3)
    files = []
    for i, doc in enumerate(docs):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(doc)
        files.append(str(path))
    code, local, _ = run(capsys, "predict", str(model), *files, "--proba")
    assert code == 0
    with thread_server(model, learn=False) as server:
        code, remote, err = run(capsys, "predict", "--url", server.url, *files, "--proba")
    assert code == 0, err
    assert remote.splitlines() == local.splitlines()
    assert len(remote.splitlines()) == len(docs)


def test_predict_url_without_a_service_is_one_line(capsys, tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("hello")
    code, out, err = run(capsys, "predict", "--url", "http://127.0.0.1:9", str(doc))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_predict_needs_a_model_or_a_url(capsys):
    code, out, err = run(capsys, "predict")
    assert code != 0
    assert "give a MODEL file, or --url" in err


def test_textcw_client_is_the_serve_client():
    from textcw_serve.client import Client

    assert textcw.client.Client is Client
