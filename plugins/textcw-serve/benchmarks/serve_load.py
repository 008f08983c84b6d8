"""Load test of ``textcw serve`` on 127.0.0.1: latency, throughput, group commit, mixed load.

    python plugins/textcw-serve/benchmarks/serve_load.py MODEL [--corpus newsgroups]
        [--seconds 5] [--clients 8] [--compare NAME=SRC ...] [--rounds 1] [--only PHASE ...]

Starts ``textcw serve MODEL --learn`` (a fresh state folder in a temporary directory) and
measures, each phase for ``--seconds``:

1. ``predict-1``: single-document ``/predict`` from one client: p50 / p99 latency;
2. ``predict-32``: ``/predict`` in batches of 32 from ``--clients`` clients: documents per second;
3. ``learn``: single-document ``/learn`` from ``--clients`` clients: acknowledged (fsynced)
   updates per second with group commit (``--group-size 1024``);
4. ``mixed``: each client sends 80 % predictions (1-32 documents) and 20 % single updates;
5. ``learn-fsync``: ``learn`` again on a second service with one fsync per update
   (``--group-size 1``).

Run only when named with ``--only`` (the answers besides the label; a service of the
``/predict`` options and ``/suggest``, so not for ``--compare`` with a source from before them):
``predict-16`` (plain batches of 16, cut as ``explain-16``'s: its reference), ``top-32`` (batches of 32 with ``"top": 2``),
``explain-16`` (batches of 16 with ``"explain": 10``, the most documents a request may explain,
each cut to 3,125 characters so that they fit the request's bound of 50,000)
and ``suggest-32`` (``/suggest`` of 32 documents, strategy ``mistake``: a model of a Gaussian
learner), each from one client.

Every loop stops after its time; the clients use persistent HTTP/1.1 connections (as a service
calling it would). Each service first gets half a second of every phase's requests, unmeasured
(the first calls compile the numba kernels). Documents are the model's own test split when ``--corpus`` is given, else
short generated texts; documents over the service's limit (100,000 characters) are left out.

Comparing versions: each ``--compare NAME=SRC`` adds a variant served from another copy of the
plugin's source (``SRC`` is put first on the service's ``PYTHONPATH``, e.g. a copy of
``plugins/textcw-serve/src`` from before a change); the working tree's own is ``current``.
Variants take turns phase by phase (in reverse order every other round), so a change of the
machine's load hits them alike; ``--rounds`` repeats everything and reports the median. An
even number of rounds gives each variant the first turn as often as the others (the order of
the turns can show: on the 2-core development machine the second of two learn runs was ahead
in every one of four pairs). The
load average is printed before and after. A request that fails stops the run with its error.
Prints a Markdown table, with the first variant's throughput over each other's. "CPU ms" is the
service's CPU time (user and system, all its threads; from ``/proc``) over the phase's requests
(of every kind, in the mixed phase): the cost of a request, which the machine's load changes
less than it changes throughput. "client CPU ms" is the same for the benchmark's own client
threads (their thread clocks): on a machine of few cores they share the cores with the
service, so a high figure there says the clients, not the service, may bound the throughput.
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

MAX_DOCUMENT_CHARS = 100_000  # the service's limit (textcw_serve.schemas)
EXPLAIN_CUT = 50_000 // 16  # explain-16's documents are cut to this: 16 fill its bound (MAX_EXPLAIN_CHARS)


def start(model: Path, state: Path, log: Path, *options: str, preexec_fn=None, pythonpath: str | None = None):
    """``textcw serve MODEL --learn`` on a free port with ``options`` (``pythonpath``: put first
    on the service's ``PYTHONPATH``); the process and its port."""
    handle = open(log, "wb")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen([sys.executable, "-m", "textcw", "serve", str(model), "--learn", "--state", str(state),
                             "--port", "0", *options], stdout=handle, stderr=subprocess.STDOUT,
                            preexec_fn=preexec_fn, env=env)
    deadline = time.monotonic() + 180
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


def run_clients(port: int, clients: int, seconds: float, work, cpu: list | None = None) -> list[tuple[str, int, float]]:
    """``work(connection, i)`` -> (kind, documents) repeatedly from each client; returns
    (kind, documents, seconds) per request. A failed request fails the run. ``cpu``: gets the
    CPU seconds the client threads used together (their own thread clocks: what sending the
    requests and reading the replies cost this process, on the cores the service also runs on)."""
    results, errors, lock = [], [], threading.Lock()
    deadline = time.perf_counter() + seconds
    used = []

    def loop(index):
        started = time.thread_time()
        conn, mine, i = Connection(port), [], index * 1_000_000
        try:
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                kind, n = work(conn, i)
                mine.append((kind, n, time.perf_counter() - t0))
                i += 1
        except Exception as exc:  # noqa: BLE001 - reported below, with the others' results dropped
            errors.append(exc)
        finally:
            conn.close()
        with lock:
            results.extend(mine)
            used.append(time.thread_time() - started)

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"{len(errors)} of {clients} clients failed; the first: {errors[0]}")
    if cpu is not None:
        cpu.append(sum(used))
    return results


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def documents_for(args):
    if args.corpus:
        import textcw

        data = textcw.load_corpus(args.corpus, split="test")
        pairs = [(str(d), str(label)) for d, label in zip(data.data, data.labels)]
    else:
        from textcw.testing.datasets import make_documents

        docs, labels = make_documents(500, random_state=3)
        pairs = [(d, str(label)) for d, label in zip(docs, labels)]
    kept = [(d, label) for d, label in pairs if len(d) <= MAX_DOCUMENT_CHARS]
    return [d for d, _ in kept], [label for _, label in kept], len(pairs) - len(kept)


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` so far (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def phases(args, docs, labels):
    """``(name, title, server, clients, work, unit, kind)`` of each phase; ``server`` names the
    service it runs against (``group``: group commit, ``single``: one fsync per update); ``kind``
    the requests reported (``None``: each kind of request the phase makes, in a row of its own)."""
    n = len(docs)

    def learn_one(c, i):
        return "learn", c.post("/learn", {"documents": [docs[i % n]], "labels": [labels[i % n]]})["documents"]

    def predict(c, i, size):
        return "predict", len(c.post("/predict", {"documents": [docs[(size * i + k) % n] for k in range(size)]})["predictions"])

    def mixed(c, i):
        return learn_one(c, i) if i % 5 == 0 else predict(c, i, 1 + (i * 7) % 32)

    def answered(c, i, size, cut=None, **options):
        batch = [docs[(size * i + k) % n][:cut] for k in range(size)]
        return "predict", len(c.post("/predict", {"documents": batch, **options})["predictions"])

    def suggest(c, i, size):
        batch = [docs[(size * i + k) % n] for k in range(size)]
        c.post("/suggest", {"documents": batch, "n": 5, "strategy": "mistake"})
        return "suggest", size

    k = args.clients
    return [
        ("predict-1", "predict, 1 document, 1 client", "group", 1, lambda c, i: predict(c, i, 1), "requests/s", None),
        ("predict-32", f"predict, batches of 32, {k} clients", "group", k, lambda c, i: predict(c, i, 32),
         "documents/s", None),
        ("learn", f"learn, 1 document, {k} clients, group commit", "group", k, learn_one, "durable updates/s", None),
        ("mixed", f"mixed load, {k} clients", "group", k, mixed, "documents/s", None),
        ("learn-fsync", f"learn, 1 document, {k} clients, one fsync per update", "single", k, learn_one,
         "durable updates/s", None),
        ("predict-16", "predict, batches of 16, 1 client", "group", 1,
         lambda c, i: answered(c, i, 16, cut=EXPLAIN_CUT), "documents/s", None),
        ("top-32", "predict with top 2, batches of 32, 1 client", "group", 1,
         lambda c, i: answered(c, i, 32, top=2), "documents/s", None),
        ("explain-16", "predict with explain 10, batches of 16, 1 client", "group", 1,
         lambda c, i: answered(c, i, 16, cut=EXPLAIN_CUT, explain=10), "documents/s", None),
        ("suggest-32", "suggest (mistake), 32 documents, 1 client", "group", 1, lambda c, i: suggest(c, i, 32),
         "documents/s", None),
    ]


# phases run only when --only names them
OPT_IN = ("predict-16", "top-32", "explain-16", "suggest-32")


def measure(results, seconds, unit, kind=None) -> list[tuple[str, float, float, float]]:
    """``(kind, throughput, p50 ms, p99 ms)`` for each kind of request in ``results`` (or ``kind``)."""
    kinds = [kind] if kind else sorted({r[0] for r in results})
    out = []
    for name in kinds:
        mine = [r for r in results if r[0] == name]
        lat = [s for _, _, s in mine]
        amount = len(mine) if unit in ("requests/s", "durable updates/s") else sum(d for _, d, _ in mine)
        out.append((name, amount / seconds, 1000 * statistics.median(lat), 1000 * percentile(lat, 0.99)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--corpus", help="e.g. newsgroups: documents and labels from its test split")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--compare", action="append", default=[], metavar="NAME=SRC",
                        help="also serve from this copy of the plugin's source (first on PYTHONPATH)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every phase this often; report the median")
    parser.add_argument("--only", action="append", default=[], metavar="PHASE",
                        help="run only these phases (predict-1, predict-32, learn, mixed, learn-fsync; and "
                             "predict-16, top-32, explain-16, suggest-32, run only when named)")
    args = parser.parse_args()
    variants = [("current", None)]
    for spec in args.compare:
        name, _, src = spec.partition("=")
        if not src or not Path(src).is_dir():
            parser.error(f"--compare {spec}: give NAME=SRC with SRC a folder (a copy of plugins/textcw-serve/src)")
        variants.append((name, str(Path(src).resolve())))
    docs, labels, skipped = documents_for(args)
    table = phases(args, docs, labels)
    unknown = sorted(set(args.only) - {p[0] for p in table})
    if unknown:
        parser.error(f"--only {', '.join(unknown)}: not a phase; name one per --only, of "
                     f"{', '.join(p[0] for p in table)}")
    chosen = [p for p in table if p[0] in args.only or (not args.only and p[0] not in OPT_IN)]
    results: dict = {}  # (phase, variant) -> list of measure() per round
    folder = Path(tempfile.mkdtemp(prefix="textcw-serve-load-"))
    servers: dict = {}
    status = None
    loads = [load_average()]
    try:
        for variant, src in variants:
            for server in dict.fromkeys(p[2] for p in chosen):
                group = "1024" if server == "group" else "1"
                tag = f"{variant}-{server}"
                servers[(variant, server)] = start(args.model, folder / f"state-{tag}", folder / f"serve-{tag}.log",
                                                   "--checkpoint-every", "0", "--group-size", group,
                                                   pythonpath=src)
        for (variant, server), (_, port) in servers.items():
            for name, _, on, _, work, _, _ in chosen:  # compiles the kernels (cached for the others)
                if on == server:
                    run_clients(port, 2, 0.5, work)
        for rnd in range(args.rounds):
            order = variants if rnd % 2 == 0 else variants[::-1]
            for name, _, server, clients, work, unit, kind in chosen:
                for variant, _ in order:
                    proc, port = servers[(variant, server)]
                    before, used = cpu_seconds(proc.pid), []
                    run = run_clients(port, clients, args.seconds, work, used)
                    after = cpu_seconds(proc.pid)
                    cpu = None if before is None or after is None else 1000 * (after - before) / len(run)
                    results.setdefault((name, variant), []).append(
                        [(*m, cpu, 1000 * used[0] / len(run)) for m in measure(run, args.seconds, unit, kind)])
        probe = Connection(servers[(variants[0][0], chosen[0][2])][1])
        status = probe.get("/status")
        probe.close()
    finally:
        for proc, _ in servers.values():
            proc.terminate()
        for proc, _ in servers.values():
            proc.wait(60)
        shutil.rmtree(folder, ignore_errors=True)
    loads.append(load_average())
    print(f"model {args.model.name}: {status['learner']}, {status['n_features']:,} features, "
          f"{len(status['classes'])} classes; {len(docs):,} documents ({skipped} over the limit left out); "
          f"{os.cpu_count()} CPUs; {args.seconds:g} s per phase, {args.rounds} round(s); load average "
          f"before {loads[0]}, after {loads[1]}\n")
    head = "| phase | " + " | ".join(f"{v}: throughput | p50 ms | p99 ms | CPU ms | client CPU ms"
                                     for v, _ in variants)
    head += "".join(f" | {variants[0][0]} / {v}" for v, _ in variants[1:])
    print(head + " |\n|" + " --- |" * (1 + 5 * len(variants) + len(variants) - 1))
    for name, title, _, _, _, unit, kind in chosen:
        kinds = [m[0] for m in results[(name, variants[0][0])][0]]
        for index, which in enumerate(kinds):
            cells, first = [], None
            for variant, _ in variants:
                rounds = [r[index] for r in results[(name, variant)]]
                rate = statistics.median(r[1] for r in rounds)
                p50 = statistics.median(r[2] for r in rounds)
                p99 = statistics.median(r[3] for r in rounds)
                cpu = [r[4] for r in rounds if r[4] is not None]
                clients_cpu = statistics.median(r[5] for r in rounds)
                first = rate if first is None else first
                cells.append(f"{rate:,.0f} {unit} | {p50:.2f} | {p99:.2f} | "
                             f"{f'{statistics.median(cpu):.2f}' if cpu else 'n/a'} | {clients_cpu:.2f}")
            others = [statistics.median(r[index][1] for r in results[(name, v)]) for v, _ in variants[1:]]
            ratios = [f"{first / other:.2f}x" if other else "n/a" for other in others]
            label = title if len(kinds) == 1 else f"{title}: {which}"
            print("| " + " | ".join([label, *cells, *ratios]) + " |")


if __name__ == "__main__":
    main()
