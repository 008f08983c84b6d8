"""Downloading a missing corpus file: atomic, digest-checked (served from a local HTTP server)."""

from __future__ import annotations

import hashlib
import http.server
import threading
from functools import partial

import pytest

from textcw.corpus.datahome import RemoteFile, fetch
from textcw.errors import DataError


@pytest.fixture(autouse=True)
def online(monkeypatch):
    monkeypatch.delenv("TEXTCW_OFFLINE", raising=False)  # the servers are local


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    (root / "data.bin").write_bytes(b"corpus bytes " * 1000)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()


def test_download_then_reuse(server, tmp_path, monkeypatch):
    url, root = server
    home = tmp_path / "home"
    monkeypatch.setenv("TEXTCW_DATA", str(home))
    digest = hashlib.sha256((root / "data.bin").read_bytes()).hexdigest()
    remote = RemoteFile("toy", "data.bin", f"{url}/data.bin", ("0" * 64, digest))
    path = fetch(remote)
    assert path == home / "toy" / "data.bin"
    assert path.read_bytes() == (root / "data.bin").read_bytes()
    assert [p.name for p in path.parent.iterdir()] == ["data.bin"]
    (root / "data.bin").unlink()  # a second call reads the local file, no download
    assert fetch(remote) == path


def test_download_with_wrong_digest_saves_nothing(server, tmp_path, monkeypatch):
    url, _ = server
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    remote = RemoteFile("toy", "data.bin", f"{url}/data.bin", ("f" * 64,))
    with pytest.raises(DataError, match="f" * 64) as err:
        fetch(remote)
    assert "nothing was saved" in str(err.value)
    assert not (tmp_path / "home").exists()  # the folders the download created are removed too


def test_missing_remote_file_is_a_clear_error(server, tmp_path, monkeypatch):
    url, _ = server
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    remote = RemoteFile("toy", "absent.bin", f"{url}/absent.bin", ("f" * 64,))
    with pytest.raises(DataError, match="absent.bin not found in .*downloading failed.*TEXTCW_DATA"):
        fetch(remote)
    assert not (tmp_path / "home").exists()


def test_no_download_without_url(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    remote = RemoteFile("private", "mail.tar.gz", None, ("f" * 64,))
    with pytest.raises(DataError, match="mail.tar.gz not found in .*TEXTCW_DATA"):
        fetch(remote)
