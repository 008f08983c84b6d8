"""``/health`` latency of ``textcw serve`` while floods of hostile clients hold its connections.

    python plugins/textcw-serve/benchmarks/slow_clients.py [MODEL] [--descriptors 200]
        [--flood 140] [--requests 200] [--seconds 30] [--classes 100] [--only NAME]

Starts ``textcw serve MODEL --learn`` (a fresh state folder in a temporary directory; without
MODEL, a synthetic ``--classes``-class model made there, so that a 512-document ``/predict``
answers about 3 MB) with its soft descriptor limit at ``--descriptors`` (200: a connection limit
of 136, as in the attack review), and for each flood below times ``GET /health`` from a fresh
connection (as a health checker makes it) while the flood is connected:

- **quiet**: no flood, for comparison;
- **slow headers**: ``--flood`` connections that never finish their headers;
- **slow readers**: ``--flood`` connections that each send one 512-document ``/predict`` and
  never read the reply;
- **slow bodies, reconnecting**: ``--flood`` connections that send a ``/predict`` body a byte
  every 0.5 s, and reconnect whenever the service closes them;
- **reconnecting flood**: ``--flood`` connections that send half their headers and reconnect
  at once whenever they are closed.

Each flood runs in a process of its own for at most ``--seconds`` (and stops once
``--requests`` health checks, one every 20 ms, are done); every health check has a 10 s
timeout. Prints p50 / p99 / max in ms, the health checks answered, and the service's peak
resident memory (RSS) during the flood, with its growth over the figure just before the flood
(per flood connection in KiB). Everything goes to 127.0.0.1; the service is killed at the end.
The goal: ``/health`` p99 under 100 ms under every flood.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import resource
import selectors
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import serve_load  # beside this file: starting the service and waiting for its port

HEALTH_TIMEOUT = 10.0  # a health check not answered in this long counts as not answered
DRIBBLE_SECONDS = 0.5  # a slow body sends one byte this often
TCP_ESTABLISHED = 1  # tcpi_state, the first byte of Linux's TCP_INFO


def many_class_model(folder: Path, classes: int) -> Path:
    """A binary-bow model of ``classes`` synthetic classes, four words each."""
    import textcw

    docs, labels = [], []
    for k in range(classes):
        for j in range(3):
            docs.append(f"topic{k}w{j} topic{k}w{j + 1} topic{k}w4 filler{(k + j) % 7}")
            labels.append(f"class{k:03d}")
    model = textcw.make_pipeline("binary-bow", "cw-stdev").fit(docs, labels)
    return textcw.save(model, folder / "many-classes.textcw-model")


def start(model: Path, state: Path, log: Path, descriptors: int):
    """The service with at most ``descriptors`` open files (its soft RLIMIT_NOFILE)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    return serve_load.start(model, state, log, preexec_fn=limit)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024


def health(port: int) -> float | None:
    """Milliseconds for ``GET /health`` on a new connection; ``None`` if not answered 200."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HEALTH_TIMEOUT)
    try:
        connection.request("GET", "/health")
        reply = connection.getresponse()
        reply.read()
        ok = reply.status == 200
    except (OSError, http.client.HTTPException):
        ok = False
    finally:
        connection.close()
    return (time.perf_counter() - started) * 1000 if ok else None


class Flood:
    """``size`` hostile connections kept up by one thread until :meth:`stop`: each sends
    ``opening`` then, if ``dribble``, a byte every :data:`DRIBBLE_SECONDS`; with ``reconnect``
    a connection the service closes is opened again at once. A slow reader (``reads=False``)
    never reads its reply: it is only held open, and looked at (without reading) at the end."""

    def __init__(self, port: int, size: int, opening: bytes, *, dribble: bool = False, reconnect: bool = False,
                 reads: bool = True):
        self.port, self.size, self.opening = port, size, opening
        self.dribble, self.reconnect, self.reads = dribble, reconnect, reads
        self.selector = selectors.DefaultSelector()
        self.held: list[socket.socket] = []  # the slow readers
        self.opened = self.closed_by_server = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if not self.reads:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            sock.settimeout(HEALTH_TIMEOUT)
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(self.opening)
        except OSError:
            sock.close()
            return
        sock.setblocking(False)
        self.opened += 1
        if self.reads:
            self.selector.register(sock, selectors.EVENT_READ, {"next": time.monotonic() + DRIBBLE_SECONDS})
        else:
            self.held.append(sock)

    def start(self) -> Flood:
        for _ in range(self.size):
            self._open()
        self.thread.start()
        return self

    def _run(self) -> None:
        while self.running:
            if not self.selector.get_map():
                time.sleep(0.05)
                continue
            for key, _ in self.selector.select(timeout=0.05):
                try:
                    gone = key.fileobj.recv(65536) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    self.closed_by_server += 1
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    if self.reconnect and self.running:
                        self._open()
            if self.dribble:
                now = time.monotonic()
                for key in list(self.selector.get_map().values()):
                    if now >= key.data["next"]:
                        key.data["next"] = now + DRIBBLE_SECONDS
                        try:
                            key.fileobj.send(b" ")
                        except OSError:
                            pass

    def stop(self) -> None:
        self.running = False
        self.thread.join(30)
        for sock in self.held:  # closed by the service (reset, or half-closed) without reading it
            self.closed_by_server += sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != TCP_ESTABLISHED
        for sock in self.held + [key.fileobj for key in self.selector.get_map().values()]:
            sock.close()
        self.selector.close()


def run_flood(port: int, size: int, options: dict, ready, stop, counts) -> None:
    """A :class:`Flood` in a process of its own (its work must not slow the health checks'
    process down): up once ``ready`` is set, until ``stop`` is; ``counts`` gets (opened, closed)."""
    flood = Flood(port, size, **options).start()
    ready.set()
    stop.wait(HEALTH_TIMEOUT + 600)
    flood.stop()
    counts.put((flood.opened, flood.closed_by_server))


def measure(port: int, pid: int, requests: int, seconds: float) -> dict:
    times, failed = [], 0
    deadline = time.monotonic() + seconds
    rss = rss_mb(pid)
    while len(times) + failed < requests and time.monotonic() < deadline:
        took = health(port)
        if took is None:
            failed += 1
        else:
            times.append(took)
        rss = max(rss, rss_mb(pid))
        time.sleep(0.02)
    times.sort()
    if not times:
        return {"answered": 0, "asked": failed, "rss": rss}
    return {"answered": len(times), "asked": len(times) + failed, "p50": statistics.median(times),
            "p99": times[min(len(times) - 1, int(0.99 * len(times)))], "max": times[-1], "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path, nargs="?")
    parser.add_argument("--classes", type=int, default=100, help="classes of the model made without MODEL")
    parser.add_argument("--descriptors", type=int, default=200)
    parser.add_argument("--flood", type=int, default=140, help="hostile connections per flood")
    parser.add_argument("--requests", type=int, default=200, help="health checks per flood, at most")
    parser.add_argument("--seconds", type=float, default=30.0, help="longest a flood runs")
    parser.add_argument("--only", help="run only the floods whose names contain this (e.g. 'readers')")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * args.flood + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * args.flood + 512), hard))
    docs = [f"topic{k % args.classes}w1 topic{k % args.classes}w2 filler3" for k in range(512)]
    body = json.dumps({"documents": docs}).encode()
    head = b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    floods = {
        "slow headers": dict(opening=b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "),
        "slow readers": dict(opening=head + b"Content-Length: %d\r\n\r\n" % len(body) + body, reads=False),
        "slow bodies, reconnecting": dict(opening=head + b"Content-Length: 100000\r\n\r\n{", dribble=True,
                                          reconnect=True),
        "reconnecting flood": dict(opening=b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", reconnect=True),
    }
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or many_class_model(Path(tmp), args.classes)
        proc, port = start(model, Path(tmp) / "state", Path(tmp) / "serve.log", args.descriptors)
        try:
            quiet = measure(port, proc.pid, args.requests, args.seconds)
            results.append(("quiet", 0, quiet))
            context = multiprocessing.get_context("fork")
            for name, options in floods.items():
                if args.only and args.only not in name:
                    continue
                before = rss_mb(proc.pid)
                ready, stop, counts = context.Event(), context.Event(), context.Queue()
                flooder = context.Process(target=run_flood, args=(port, args.flood, options, ready, stop, counts))
                flooder.start()
                try:
                    ready.wait(120)
                    result = measure(port, proc.pid, args.requests, args.seconds)
                finally:
                    stop.set()
                    result["opened"], result["closed"] = counts.get(timeout=120)
                    flooder.join(60)
                result["growth"] = result["rss"] - before
                results.append((name, args.flood, result))
                time.sleep(1.0)  # the service closes what is left of the flood
        finally:
            proc.kill()
            proc.wait(30)
    limit = min(2048, max(8, args.descriptors - 64))
    print(f"| flood ({args.flood} connections; connection limit {limit}) | /health answered | p50 ms | p99 ms "
          "| max ms | peak RSS MB | RSS growth MB (KiB per flood connection) | flood connections opened / closed "
          "by the service |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, size, r in results:
        timing = " | ".join(f"{r[k]:.1f}" if k in r else "-" for k in ("p50", "p99", "max"))
        growth = f"{r['growth']:.0f} ({r['growth'] * 1024 / size:.0f})" if size else "-"
        opened = f"{r['opened']} / {r['closed']}" if size else "-"
        print(f"| {name} | {r['answered']} of {r['asked']} | {timing} | {r['rss']:.0f} | {growth} | {opened} |")
    print(f"(load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
