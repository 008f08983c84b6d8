"""Corpus tests never download: a missing archive is textcw's clear error, not a fetch."""

from __future__ import annotations

import os

import pytest

from textcw.corpus import datahome
from textcw.errors import DataError
from textcw.pipeline import load_corpus


def test_every_test_runs_offline():
    assert os.environ["TEXTCW_OFFLINE"] == "1" and datahome.offline()


def test_a_missing_archive_under_offline_mode_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))

    def no_network(remote):
        raise AssertionError(f"tried to download {remote.filename}")

    monkeypatch.setattr(datahome, "download_file", no_network)
    with pytest.raises(DataError) as info:
        load_corpus("newsgroups:comp", "train")
    assert str(info.value) == (
        f"corpus file 20news-bydate.tar.gz not found in {tmp_path / 'newsgroups'} and TEXTCW_OFFLINE=1; "
        "put 20news-bydate.tar.gz (from http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz) there, "
        "or set TEXTCW_DATA to the folder that holds newsgroups/20news-bydate.tar.gz")
    assert not (tmp_path / "newsgroups").exists() or not any((tmp_path / "newsgroups").iterdir())
