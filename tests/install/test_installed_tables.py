"""Tables as corpora from the installed ``textcw``: CSV everywhere, Parquet with its extra (and
one line naming the extra without it)."""

from __future__ import annotations

import csv
import subprocess

import pytest

from tests.install.test_installed_cli import BIN, textcw


def write_rows(path, n=120):
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["body", "topic"])
        for i in range(n):
            writer.writerow([["bad awful hate", "good great love"][i % 2] + f" w{i}", ["neg", "pos"][i % 2]])


def has_pyarrow() -> bool:
    return subprocess.run([str(BIN / "python"), "-c", "import pyarrow"], capture_output=True).returncode == 0


@pytest.mark.every_profile
def test_train_and_predict_a_csv_file(tmp_path):
    write_rows(tmp_path / "d.csv")
    run = textcw("train", "--corpus", "csv:d.csv?text=body&label=topic", "--learner", "pa1", "--out", "m.textcw-model",
                 cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("csv:d.csv?text=body&label=topic  pa1  accuracy 1.0000"), \
        run.stderr
    run = textcw("predict", "m.textcw-model", "--input", "csv:d.csv?text=body", cwd=tmp_path)
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and lines[0] == "body,topic,predicted,probability" and len(lines) == 121


@pytest.mark.every_profile
def test_parquet_with_its_extra_or_one_line_naming_it(tmp_path):
    pa = pytest.importorskip("pyarrow")  # this test's own process writes the file
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["good", "bad"] * 40, "label": ["pos", "neg"] * 40}), tmp_path / "d.parquet")
    run = textcw("train", "--corpus", "parquet:d.parquet", "--learner", "pa1", cwd=tmp_path)
    if has_pyarrow():
        assert run.returncode == 0 and "accuracy 1.0000" in run.stdout, run.stderr
    else:
        assert run.returncode == 1 and run.stderr.strip() == (
            "error: reading Parquet needs the parquet extra: pip install 'textcw[parquet]' (pyarrow)")
