"""Pinning by digest and by archive members; files without a digest; offline mode; bad downloads."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import tarfile
import threading

import pytest

from textcw.corpus.datahome import RemoteFile, fetch
from textcw.errors import DataError

MEMBERS = {"data/a.txt": b"alpha\n", "data/b.txt": b"beta\n"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tar_bytes(members: dict[str, bytes], mtime: int = 0) -> bytes:
    """A .tar.gz of ``members``, byte for byte the same on every call: the gzip header carries
    ``mtime`` too (``tarfile``'s "w:gz" would stamp the current second there, so two calls a
    second apart differ)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=mtime) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def remote(url=None, sha256=("0" * 64,), members=tuple((n, sha(d)) for n, d in MEMBERS.items())):
    return RemoteFile("toy", "toy.tar.gz", url, sha256, members)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    monkeypatch.delenv("TEXTCW_OFFLINE", raising=False)  # the servers are local
    (tmp_path / "toy").mkdir()
    return tmp_path / "toy"


def test_archive_with_unknown_digest_is_accepted_by_its_members(home):
    # A repacking (different mtime, an extra member): different archive bytes, same data.
    (home / "toy.tar.gz").write_bytes(tar_bytes({**MEMBERS, "data/extra": b"x"}, mtime=12345))
    assert fetch(remote()) == home / "toy.tar.gz"


def test_changed_member_is_refused_with_both_digests(home):
    path = home / "toy.tar.gz"
    path.write_bytes(tar_bytes({**MEMBERS, "data/b.txt": b"BETA\n"}))
    with pytest.raises(DataError) as err:
        fetch(remote())
    message = str(err.value)
    assert f"has sha256 {sha(path.read_bytes())}" in message  # the file's digest ...
    assert "known-good sha256 of toy.tar.gz is " + "0" * 64 in message  # ... and the expected one
    assert "member data/b.txt differs" in message


def test_missing_member_and_unreadable_archive_are_refused(home):
    path = home / "toy.tar.gz"
    path.write_bytes(tar_bytes({"data/a.txt": MEMBERS["data/a.txt"]}))
    with pytest.raises(DataError, match="lacks 1 expected member"):
        fetch(remote())
    path.write_bytes(b"\x1f\x8b this is not a gzip stream")
    with pytest.raises(DataError, match="not a readable archive"):
        fetch(remote())


def test_truncated_archive_is_refused(home):
    data = tar_bytes(MEMBERS)
    (home / "toy.tar.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="has sha256 .*delete it and download it again"):
        fetch(remote())


def test_file_without_digest_is_read_if_present_and_never_downloaded(home):
    unpinned = RemoteFile("toy", "big.gz", "http://127.0.0.1:9/big.gz", ())
    with pytest.raises(DataError) as err:
        fetch(unpinned)
    assert "no pinned digest for it, so it does not download it" in str(err.value)
    assert "http://127.0.0.1:9/big.gz" in str(err.value) and "TEXTCW_DATA" in str(err.value)
    (home / "big.gz").write_bytes(b"anything the user put there")
    assert fetch(unpinned) == home / "big.gz"


def test_offline_mode_names_the_variable(home, monkeypatch):
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")
    with pytest.raises(DataError, match="toy.tar.gz not found in .* and TEXTCW_OFFLINE=1"):
        fetch(remote(url="http://127.0.0.1:9/toy.tar.gz"))
    assert list(home.iterdir()) == []


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b""
    claimed = 0

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Length", str(self.claimed or len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    servers = []

    def start(body: bytes, claimed: int = 0) -> str:
        handler = type("H", (_Handler,), {"body": body, "claimed": claimed})
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/toy.tar.gz"

    yield start
    for httpd in servers:
        httpd.shutdown()


def test_download_verified_by_members_is_saved(home, serve):
    url = serve(tar_bytes(MEMBERS, mtime=99))
    assert fetch(remote(url=url)).read_bytes() == tar_bytes(MEMBERS, mtime=99)
    assert [p.name for p in home.iterdir()] == ["toy.tar.gz"]


def test_download_cut_short_saves_nothing(home, serve):
    data = tar_bytes(MEMBERS)
    url = serve(data[:40], claimed=len(data))  # the connection closes before the promised end
    with pytest.raises(DataError, match=f"toy.tar.gz not found in .*stopped after 40 of {len(data)} bytes"):
        fetch(remote(url=url))
    assert list(home.iterdir()) == []


def test_download_with_bad_members_saves_nothing(home, serve):
    url = serve(tar_bytes({**MEMBERS, "data/a.txt": b"tampered\n"}))
    with pytest.raises(DataError, match="the download from .*member data/a.txt differs.*nothing was saved"):
        fetch(remote(url=url))
    assert list(home.iterdir()) == []
