"""Load test of ``textcw serve`` on 127.0.0.1: latency, throughput, group commit, mixed load.

    python plugins/textcw-serve/benchmarks/serve_load.py MODEL [--seconds 5] [--clients 8]

Starts ``textcw serve MODEL --learn`` (a fresh state folder in a temporary directory) and
measures, each phase for ``--seconds``:

1. single-document ``/predict`` from one client: p50 / p99 latency;
2. ``/predict`` in batches of 32 from ``--clients`` clients: documents per second;
3. single-document ``/learn`` from ``--clients`` clients: acknowledged (fsynced) updates per
   second with group commit (``--group-size 1024``), then again with one fsync per update
   (``--group-size 1``, a second server);
4. a mixed load: each client sends 80 % predictions (1-32 documents) and 20 % single updates.

Every loop stops after its time; the clients use persistent HTTP/1.1 connections (as a service
calling it would). Documents are the model's own test split when ``--corpus`` is given, else
short generated texts. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def start(model: Path, state: Path, log: Path, *options: str, preexec_fn=None):
    """``textcw serve MODEL --learn`` on a free port with ``options``; the process and its port."""
    handle = open(log, "wb")
    proc = subprocess.Popen([sys.executable, "-m", "textcw", "serve", str(model), "--learn", "--state", str(state),
                             "--port", "0", *options], stdout=handle, stderr=subprocess.STDOUT,
                            preexec_fn=preexec_fn, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", log.read_text(errors="replace"))
        if found:
            return proc, int(found.group(1))
        if proc.poll() is not None:
            raise SystemExit(log.read_text())
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("textcw serve did not start")


class Connection:
    """One persistent HTTP/1.1 connection to the service (as a service calling it would keep)."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(self, path: str, payload: dict) -> dict:
        self.conn.request("POST", path, body=json.dumps(payload), headers={"Content-Type": "application/json"})
        reply = self.conn.getresponse()
        body = reply.read()
        if reply.status != 200:
            raise RuntimeError(f"{path}: {reply.status} {body[:200]!r}")
        return json.loads(body)

    def get(self, path: str) -> dict:
        self.conn.request("GET", path)
        return json.loads(self.conn.getresponse().read())

    def close(self) -> None:
        self.conn.close()


def run_clients(port: int, clients: int, seconds: float, work) -> list[tuple[str, int, float]]:
    """``work(connection, i)`` -> (kind, documents) repeatedly from each client; returns
    (kind, documents, seconds) per request."""
    results, lock = [], threading.Lock()
    deadline = time.perf_counter() + seconds

    def loop(index):
        conn, mine, i = Connection(port), [], index * 1_000_000
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            kind, n = work(conn, i)
            mine.append((kind, n, time.perf_counter() - t0))
            i += 1
        conn.close()
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def documents_for(args):
    if args.corpus:
        import textcw

        data = textcw.load_corpus(args.corpus, split="test")
        return [str(d) for d in data.data], [str(label) for label in data.labels]
    from textcw.testing.datasets import make_documents

    docs, labels = make_documents(500, random_state=3)
    return docs, [str(label) for label in labels]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--corpus", help="e.g. newsgroups:sci: documents and labels from its test split")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    docs, labels = documents_for(args)
    n = len(docs)
    rows = []

    def row(name, results, unit, kind=None):
        results = [r for r in results if kind is None or r[0] == kind]
        lat = [s for _, _, s in results]
        amount = len(results) if unit.endswith("requests/s") or unit.endswith("updates/s") else sum(d for _, d, _ in results)
        rows.append((name, f"{amount / args.seconds:,.0f} {unit}", f"{1000 * statistics.median(lat):.2f}",
                     f"{1000 * percentile(lat, 0.99):.2f}"))

    def learn_one(c, i):
        return "learn", c.post("/learn", {"documents": [docs[i % n]], "labels": [labels[i % n]]})["documents"]

    def predict(c, i, size):
        return "predict", len(c.post("/predict", {"documents": [docs[(size * i + k) % n] for k in range(size)]})["predictions"])

    def mixed(c, i):
        return learn_one(c, i) if i % 5 == 0 else predict(c, i, 1 + (i * 7) % 32)

    folder = Path(tempfile.mkdtemp(prefix="textcw-serve-load-"))
    try:
        proc, port = start(args.model, folder / "state", folder / "serve.log", "--checkpoint-every", "0",
                            "--group-size", "1024")
        try:
            row("predict, 1 document, 1 client", run_clients(port, 1, args.seconds, lambda c, i: predict(c, i, 1)),
                "requests/s")
            row(f"predict, batches of 32, {args.clients} clients",
                run_clients(port, args.clients, args.seconds, lambda c, i: predict(c, i, 32)), "documents/s")
            row(f"learn, 1 document, {args.clients} clients, group commit",
                run_clients(port, args.clients, args.seconds, learn_one), "durable updates/s")
            load = run_clients(port, args.clients, args.seconds, mixed)
            for kind in ("predict", "learn"):
                row(f"mixed load, {args.clients} clients: {kind}", load, "documents/s", kind)
            probe = Connection(port)
            status = probe.get("/status")
            probe.close()
        finally:
            proc.terminate()
            proc.wait(60)
        proc, port = start(args.model, folder / "state-1", folder / "serve-1.log", "--checkpoint-every", "0",
                            "--group-size", "1")
        try:
            row(f"learn, 1 document, {args.clients} clients, one fsync per update",
                run_clients(port, args.clients, args.seconds, learn_one), "durable updates/s")
        finally:
            proc.terminate()
            proc.wait(60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"model {args.model.name}: {status['learner']}, {status['n_features']:,} features, "
          f"classes {', '.join(map(str, status['classes']))}; {os.cpu_count()} CPUs; {args.seconds:g} s per phase\n")
    print("| phase | throughput | p50 ms | p99 ms |\n| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
