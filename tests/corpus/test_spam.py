"""ECML/PKDD 2006 spam, task A: published counts, exact vectors, CRLF copies, tasks."""

from __future__ import annotations

import numpy as np
import pytest

import textcw
from textcw.corpus import spam
from textcw.errors import InputError, UnknownNameError
from corpus_fixtures import offline  # noqa: F401 (a pytest fixture)

pytestmark = [pytest.mark.corpus, pytest.mark.usefixtures("offline")]


@pytest.mark.parametrize("user,width", [("u00", 48784), ("u01", 83636), ("u02", 106780)])
def test_published_counts(data_home, user, width):
    X, target = spam.read_user(str(data_home / "spam" / spam.FILES[user].filename))
    assert X.shape == (2500, width)  # ids run from 1 to the largest id
    assert np.bincount(target).tolist() == [1250, 1250]


def test_first_lines_are_read_exactly(data_home):
    X, target = spam.read_user(str(data_home / "spam" / "task_a_u00_eval_lab.tf"))
    # "-1 1:10 2:6 3:2 4:2 5:4 ..." with 170 features; id k is column k - 1
    assert target[0] == 0 and X[0].nnz == 170
    assert X[0, 0] == 10 and X[0, 1] == 6 and X[0, 2] == 2 and X[0, 4] == 4
    # second line "-1 6:1 9:1 86:1 ..."
    assert X[1, 5] == 1 and X[1, 8] == 1 and X[1, 85] == 1 and X[1, 0] == 0


def test_tasks_sample_2000_balanced_and_split(data_home):
    train = textcw.load_corpus("spam:u01", "train")
    test = textcw.load_corpus("spam:u01", "test")
    assert (len(train), len(test)) == (1600, 400)
    assert train.target_names == ["ham", "spam"]
    assert np.bincount(train.target).tolist() == [800, 800]
    assert np.bincount(test.target).tolist() == [200, 200]
    assert train.data.shape[1] == test.data.shape[1] == 83636
    everything = textcw.load_corpus("spam:u01", "train", sample_size=None)
    assert len(everything) == 2000  # 80% of all 2,500


def test_crlf_copy_is_accepted_and_reads_the_same(data_home, tmp_path, monkeypatch):
    original = data_home / "spam" / "task_a_u02_eval_lab.tf"
    copy = tmp_path / "spam" / original.name
    copy.parent.mkdir()
    copy.write_bytes(original.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    a = textcw.load_corpus("spam:u02", "test")
    monkeypatch.setenv("TEXTCW_DATA", str(data_home))
    b = textcw.load_corpus("spam:u02", "test")
    assert (a.data != b.data).nnz == 0 and a.target.tolist() == b.target.tolist()


def test_task_is_required(data_home):
    with pytest.raises(InputError, match="spam:u00, spam:u01 or spam:u02"):
        textcw.load_corpus("spam")
    with pytest.raises(UnknownNameError, match="spam:u00"):
        textcw.load_corpus("spam:u03")
