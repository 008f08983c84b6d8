"""The USPS corpus from the ESL files: published counts, tasks, bad files."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import shutil

import numpy as np
import pytest
import textcw
from textcw.errors import DataError, UnknownNameError

from textcw_pixels import usps
from pixels_fixtures import data_home, offline  # noqa: F401 (pytest fixtures)


def test_task_names():
    assert usps.parse_task(None) == (usps.DIGITS, [[d] for d in range(10)])
    assert usps.parse_task("3v8") == (["3", "8"], [[3], [8]])
    names, groups = usps.parse_task("4vall")
    assert names == ["4", "not-4"] and groups[1] == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    for bad in ("3v3", "10v2", "av2", "3vs8", "3v"):
        with pytest.raises(UnknownNameError, match="usps:AvB"):
            usps.parse_task(bad)


@pytest.mark.corpus
@pytest.mark.usefixtures("offline")
class TestRealFiles:
    def test_published_counts(self, data_home):
        train = textcw.load_corpus("usps", "train")
        test = textcw.load_corpus("usps", "test")
        assert train.data.shape == (7291, 256) and test.data.shape == (2007, 256)
        assert np.bincount(train.target).tolist() == [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
        assert np.bincount(test.target).tolist() == [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
        assert train.data.min() == -1.0 and train.data.max() == 1.0

    def test_first_image_is_read_exactly(self, data_home):
        pixels, digits = usps.read_file(str(data_home / "usps" / "zip.train.gz"))
        # "6.0000 -1.0000 ... -1.0000 -0.6310 0.8620 -0.1670 -1.0000 ..." (first line)
        assert digits[0] == 6 and pixels[0, :7].tolist() == [-1.0] * 7
        assert pixels[0, 7:10].tolist() == [-0.631, 0.862, -0.167]

    @pytest.mark.parametrize("task,sizes", [("0v9", (1838, 536)), ("1v2", (1736, 462)),
                                            ("3v4", (1310, 366)), ("5v6", (1220, 330)),
                                            ("7v8", (1187, 313)), ("3v8", (1200, 332)),
                                            ("0vall", (7291, 2007))])
    def test_tasks(self, data_home, task, sizes):
        train = textcw.load_corpus(f"usps:{task}", "train")
        test = textcw.load_corpus(f"usps:{task}", "test")
        assert (len(train), len(test)) == sizes and train.name == f"usps:{task}"
        assert set(np.unique(train.target)) == {0, 1}

    def test_one_vs_rest_labels(self, data_home):
        test = textcw.load_corpus("usps:0vall", "test")
        assert test.target_names == ["0", "not-0"] and np.bincount(test.target).tolist() == [359, 1648]

    def test_corrupt_and_foreign_files(self, data_home, tmp_path, monkeypatch):
        folder = tmp_path / "usps"
        folder.mkdir()
        shutil.copyfile(data_home / "usps" / "zip.test.gz", folder / "zip.test.gz")
        with open(folder / "zip.test.gz", "r+b") as fh:
            fh.truncate(1000)
        monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
        with pytest.raises(DataError) as err:
            textcw.load_corpus("usps:0v9", "test")
        digest = hashlib.sha256((folder / "zip.test.gz").read_bytes()).hexdigest()
        assert digest in str(err.value) and usps.FILES["test"].sha256[0] in str(err.value)
        # a file whose digest is accepted but whose lines are not ESL zip data
        with gzip.open(folder / "zip.test.gz", "wt") as fh:
            fh.write("3 " + " ".join(["0.5"] * 256) + "\n" + "4 " + " ".join(["0.5"] * 200) + "\n")
        digest = hashlib.sha256((folder / "zip.test.gz").read_bytes()).hexdigest()
        monkeypatch.setitem(usps.FILES, "test", dataclasses.replace(usps.FILES["test"], sha256=(digest,)))
        with pytest.raises(DataError, match="is not ESL zip data"):
            textcw.load_corpus("usps:0v9", "test")
        assert sorted(p.name for p in folder.iterdir()) == ["zip.test.gz"]
