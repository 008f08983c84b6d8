"""``/health`` and ``/predict`` latency of ``textcw serve`` while slow clients hold connections.

    python plugins/textcw-serve/benchmarks/slow_clients.py MODEL [--slow 500] [--requests 200]
                                                                 [--descriptors 256]

Starts ``textcw serve MODEL --learn`` (a fresh state folder in a temporary directory, the
process's soft descriptor limit set to ``--descriptors``), opens ``--slow`` connections that
never finish their headers (half send nothing, half half a request), then times ``--requests``
``GET /health`` and single-document ``POST /predict`` requests, each on a new connection (as a
health checker makes them), and prints p50 / p99 / max in ms. Then the same without slow
clients, for comparison. The goal (issue 26): ``/health`` within 100 ms with 500 slow clients.
Every loop is bounded by its count; the server is killed at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import tempfile
import time
from pathlib import Path

import serve_load  # beside this file: starting the service and waiting for its port


def start(model: Path, state: Path, log: Path, descriptors: int):
    """The service with at most ``descriptors`` open files (its soft RLIMIT_NOFILE)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    return serve_load.start(model, state, log, preexec_fn=limit)


def timed(port: int, method: str, path: str, body: bytes | None) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        reply = connection.getresponse()
        reply.read()
        if reply.status != 200:
            raise SystemExit(f"{method} {path} answered {reply.status}")
    finally:
        connection.close()
    return (time.perf_counter() - started) * 1000


def measure(port: int, requests: int) -> dict:
    body = json.dumps({"documents": ["orbit rocket launch"]}).encode()
    out = {}
    for name, method, path, payload in (("health", "GET", "/health", None), ("predict", "POST", "/predict", body)):
        times = sorted(timed(port, method, path, payload) for _ in range(requests))
        out[name] = (statistics.median(times), times[int(0.99 * (len(times) - 1))], times[-1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--descriptors", type=int, default=256)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.slow + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.slow + 256), hard))
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start(args.model, Path(tmp) / "state", Path(tmp) / "serve.log", args.descriptors)
        try:
            quiet = measure(port, args.requests)
            slow = []
            for i in range(args.slow):
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                if i % 2 == 0:
                    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                slow.append(sock)
            loaded = measure(port, args.requests)
            for sock in slow:
                sock.close()
        finally:
            proc.kill()
            proc.wait(30)
    print(f"| requests ({args.requests} each, new connection each) | slow clients | p50 ms | p99 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    for label, result, n in (("quiet", quiet, 0), ("slow", loaded, args.slow)):
        for name, (p50, p99, worst) in result.items():
            print(f"| {name} | {n} | {p50:.2f} | {p99:.2f} | {worst:.2f} |")
    print(f"(server soft descriptor limit {args.descriptors}; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
