"""Attacks on the corpus downloader, each from a local HTTP server on 127.0.0.1: endless and
oversized bodies, trickling and silent servers, wrong digests, data homes that cannot be written,
the umask, interruptions and leftovers, concurrent downloads, https first, progress."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import os
import signal
import socketserver
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from textcw.corpus import download
from textcw.corpus.datahome import RemoteFile, fetch
from textcw.errors import DataError
from hang import HANG_SECONDS

fcntl = pytest.importorskip("fcntl", reason="the .part lock and these tests need POSIX flock")

BODY = bytes(range(256)) * 40  # 10,240 bytes
DIGEST = hashlib.sha256(BODY).hexdigest()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that give up on purpose break their connections


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    monkeypatch.delenv("TEXTCW_OFFLINE", raising=False)
    return tmp_path / "home" / "toy"


@pytest.fixture
def serve():
    """``serve(do_get)`` starts a server whose GET handler is ``do_get(handler)``; returns its URL."""
    servers, stop = [], threading.Event()

    def start(do_get) -> str:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                try:
                    do_get(self)
                except OSError:  # the client went away
                    pass

            def log_message(self, *args):
                pass

        httpd = _Server(("127.0.0.1", 0), Handler)
        httpd.requests = []
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/data.bin"

    start.stop = stop
    yield start
    stop.set()
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def send_body(body: bytes, *, length: int | None = -1):
    def do_get(h):
        h.send_response(200)
        if length is not None:
            h.send_header("Content-Length", str(len(body) if length == -1 else length))
        h.end_headers()
        h.wfile.write(body)
    return do_get


def remote(url, digest=DIGEST, **kwargs) -> RemoteFile:
    return RemoteFile("toy", "data.bin", url, (digest,), **kwargs)


def contents(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ------------------------------------------------------------------------------------ size


def test_endless_body_stops_at_the_cap(home, serve):
    def endless(h):  # no Content-Length, data until the client hangs up
        h.send_response(200)
        h.end_headers()
        while not serve.stop.is_set():
            h.wfile.write(b"x" * 65536)

    with pytest.raises(DataError, match="the server sent more than the 100000 bytes a download of it may have; "
                                        "nothing was saved"):
        fetch(remote(serve(endless), max_bytes=100_000))
    assert contents(home) == []


def test_announced_oversize_is_refused_before_the_body(home, serve):
    url = serve(send_body(BODY, length=10**12))
    with pytest.raises(DataError, match="the server announced 1000000000000 bytes, more than the 5000 "):
        fetch(remote(url, max_bytes=5000))
    assert contents(home) == []


def test_default_cap_applies_without_max_bytes(home, serve, monkeypatch):
    monkeypatch.setattr(download, "DEFAULT_MAX_BYTES", len(BODY) - 1)
    url = serve(send_body(BODY, length=None))
    with pytest.raises(DataError, match=f"more than the {len(BODY) - 1} bytes"):
        fetch(remote(url))
    monkeypatch.setattr(download, "DEFAULT_MAX_BYTES", len(BODY))  # exactly the cap is fine
    assert fetch(remote(url)).read_bytes() == BODY


# ------------------------------------------------------------------------------------ time


def test_trickling_body_hits_the_deadline(home, serve, monkeypatch):
    monkeypatch.setattr(download, "DOWNLOAD_DEADLINE", 0.5)

    def trickle(h):  # a valid response, one byte at a time, for far longer than the deadline
        h.send_response(200)
        h.send_header("Content-Length", str(len(BODY)))
        h.end_headers()
        for byte in BODY:
            if serve.stop.wait(0.02):
                return
            h.wfile.write(bytes([byte]))
            h.wfile.flush()

    with pytest.raises(DataError, match="data.bin not found in .* the download did not finish within 0.5 seconds"):
        fetch(remote(serve(trickle)))
    assert contents(home) == []


@pytest.mark.parametrize("behaviour", ["trickled-headers", "silent"])
def test_stalling_before_the_body_hits_the_deadline(home, monkeypatch, behaviour):
    # Headers are read line by line and every byte restarts the socket timeout: only the
    # overall deadline (its watchdog shuts the socket) stops a server that trickles them.
    monkeypatch.setattr(download, "DOWNLOAD_DEADLINE", 0.5)
    stop = threading.Event()

    class Raw(socketserver.BaseRequestHandler):
        def handle(self):
            with contextlib.suppress(OSError):
                if behaviour == "trickled-headers":
                    self.request.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    while not stop.wait(0.02):
                        self.request.sendall(b"a")
                else:
                    stop.wait(30)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Raw)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(DataError, match="did not finish within 0.5 seconds"):
            fetch(remote(f"http://127.0.0.1:{server.server_address[1]}/data.bin"))
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    assert contents(home) == []


# ------------------------------------------------------------------------------------ content


def test_wrong_digest_saves_nothing_and_leaves_no_part(home, serve):
    url = serve(send_body(BODY))
    with pytest.raises(DataError, match=f"has sha256 {DIGEST}, but the known-good sha256 of data.bin is "
                                        f"{'e' * 64}; nothing was saved"):
        fetch(remote(url, digest="e" * 64))
    assert contents(home) == []


def test_umask_is_respected(home, serve):
    url = serve(send_body(BODY))
    for mask, mode in [(0o002, 0o664), (0o077, 0o600)]:
        old = os.umask(mask)
        try:
            path = fetch(remote(url))
        finally:
            os.umask(old)
        assert stat.S_IMODE(path.stat().st_mode) == mode
        path.unlink()


def test_leftover_part_of_a_killed_process_is_overwritten(home, serve):
    home.mkdir(parents=True)
    (home / ".data.bin.part").write_bytes(b"garbage from a process killed mid-download" * 1000)
    assert fetch(remote(serve(send_body(BODY)))).read_bytes() == BODY
    assert contents(home) == ["data.bin"]


def test_concurrent_download_waits_for_the_other_process(home, serve):
    # Another downloader holds the lock on the .part file; it finishes while we wait, and we
    # use its file instead of downloading again.
    hits = []
    url = serve(lambda h: (hits.append(1), send_body(BODY)(h)))
    home.mkdir(parents=True)
    part = home / ".data.bin.part"
    fd = os.open(part, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)

    def other_process_finishes():
        time.sleep(0.3)
        os.write(fd, BODY)
        os.replace(part, home / "data.bin")
        os.close(fd)

    helper = threading.Thread(target=other_process_finishes)
    helper.start()
    try:
        assert fetch(remote(url)).read_bytes() == BODY
    finally:
        helper.join()
    assert hits == [] and contents(home) == ["data.bin"]


def test_lock_held_past_the_deadline_is_a_clear_error(home, serve, monkeypatch):
    monkeypatch.setattr(download, "DOWNLOAD_DEADLINE", 0.3)
    home.mkdir(parents=True)
    fd = os.open(home / ".data.bin.part", os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(DataError, match="another process has been downloading data.bin into .* for too "
                                            "long; wait for it or remove .*.data.bin.part"):
            fetch(remote(serve(send_body(BODY))))
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------ interruption


class Terminated(BaseException):
    """What a SIGTERM handler might raise."""


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit, Terminated])
def test_interruption_leaves_no_part(home, serve, monkeypatch, exc):
    seen = []

    @contextlib.contextmanager
    def interrupted_progress(label, total):
        def advance(n):
            seen.append(n)
            assert (home / ".data.bin.part").exists()  # the download is under way
            raise exc()
        yield advance

    monkeypatch.setattr(download, "_progress", interrupted_progress)
    with pytest.raises(exc):  # propagated as it is, not turned into a DataError
        fetch(remote(serve(send_body(BODY))))
    assert seen and contents(home) == []


STALLED_CHILD = textwrap.dedent("""
    import signal, sys
    from textcw.corpus.datahome import RemoteFile, fetch
    if sys.argv[3] == "term":  # as a command line does: SIGTERM becomes an exception
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    else:  # SIGINT raises KeyboardInterrupt, as in the command line, even where the test runner
        # was started in the background, whose children inherit SIGINT ignored (the child then
        # sat out the download's 30 s read timeout)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    fetch(RemoteFile("toy", "data.bin", sys.argv[1], (sys.argv[2],)))
""")


@pytest.mark.parametrize("sig,how", [(signal.SIGINT, "int"), (signal.SIGTERM, "term")])
def test_signal_mid_download_leaves_no_part(home, serve, sig, how):
    def half_then_stall(h):
        h.send_response(200)
        h.send_header("Content-Length", str(len(BODY)))
        h.end_headers()
        h.wfile.write(BODY[:4000])
        h.wfile.flush()
        serve.stop.wait(60)

    url = serve(half_then_stall)
    proc = subprocess.Popen([sys.executable, "-c", STALLED_CHILD, url, DIGEST, how],
                            env={**os.environ, "TEXTCW_DATA": str(home.parent)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    part = home / ".data.bin.part"
    deadline = time.monotonic() + 60
    while not (part.exists() and part.stat().st_size > 0):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[1]
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert contents(home) == []


# ------------------------------------------------------------------------------ permissions

AS_NOBODY = textwrap.dedent("""
    import sys
    from textcw.corpus.datahome import RemoteFile, fetch
    from textcw.errors import DataError
    try:
        fetch(RemoteFile("toy", "data.bin", sys.argv[1], (sys.argv[2],)))
        print("downloaded")
    except DataError as exc:
        print(exc)
""")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="chmod does not stop root and only root can run a child as another user")
def test_data_home_without_permission_is_a_clear_error(serve):
    url = serve(send_body(BODY))
    root = Path(tempfile.mkdtemp(prefix="textcw-home-"))
    try:
        os.chmod(root, 0o755)  # owned by root: "nobody" may read but not write
        no_folder, no_write, unreadable = root / "a", root / "b", root / "c"
        no_folder.mkdir(mode=0o755)
        (no_write / "toy").mkdir(parents=True, mode=0o755)
        (unreadable / "toy").mkdir(parents=True, mode=0o755)
        (unreadable / "toy" / "data.bin").write_bytes(BODY)
        os.chmod(unreadable / "toy" / "data.bin", 0o600)
        outputs = {}
        for home in (no_folder, no_write, unreadable):
            run = subprocess.run([sys.executable, "-c", AS_NOBODY, url, DIGEST], capture_output=True, text=True,
                                 env={**os.environ, "TEXTCW_DATA": str(home), "TEXTCW_OFFLINE": "0"},
                                 user=65534, timeout=HANG_SECONDS)
            assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
            outputs[home] = run.stdout.strip()
        assert outputs[no_folder].startswith(f"cannot create the data folder {no_folder / 'toy'}: ")
        assert "Permission denied" in outputs[no_folder] and outputs[no_folder].endswith("set TEXTCW_DATA")
        assert outputs[no_write] == (
            f"cannot write data.bin into the data folder {no_write / 'toy'} (Permission denied); make the folder "
            "writable or set TEXTCW_DATA to a folder you can write to")
        assert outputs[unreadable] == (
            f"cannot read {unreadable / 'toy' / 'data.bin'} (Permission denied); make it and its folders "
            "readable, or set TEXTCW_DATA to a data folder you can read")
        assert sorted(p.name for p in (no_write / "toy").iterdir()) == []
    finally:
        for path in sorted(root.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        root.rmdir()


# ------------------------------------------------------------------------------ https, progress


def test_plain_http_addresses_are_tried_as_https_first():
    assert download._candidate_urls("http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz") == [
        "https://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz",
        "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz"]
    assert download._candidate_urls("https://kdd.ics.uci.edu/a.tar.gz") == ["https://kdd.ics.uci.edu/a.tar.gz"]
    # an explicit port belongs to the plain protocol: no https guess on it
    assert download._candidate_urls("http://127.0.0.1:8000/a") == ["http://127.0.0.1:8000/a"]


def test_unreachable_https_falls_back_to_http(home, serve, monkeypatch):
    url = serve(send_body(BODY))
    https = url.replace("http://", "https://")  # the server speaks plain HTTP: the TLS handshake fails
    monkeypatch.setattr(download, "_candidate_urls", lambda u: [https, u])
    assert fetch(remote(url)).read_bytes() == BODY
    assert contents(home) == ["data.bin"]


def test_progress_is_drawn_on_a_terminal_only(home, serve, monkeypatch, capsys):
    url = serve(send_body(BODY))
    fetch(remote(url))  # stderr is not a terminal here: nothing is drawn
    assert capsys.readouterr().err == ""
    (home / "data.bin").unlink()
    screen = io.StringIO()
    monkeypatch.setattr(download, "_progress_console",
                        lambda: Console(file=screen, force_terminal=True, width=100))
    fetch(remote(url))
    assert "downloading data.bin" in screen.getvalue() and "10.2/10.2 kB" in screen.getvalue()
