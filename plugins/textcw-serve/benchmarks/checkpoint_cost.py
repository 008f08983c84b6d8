"""What a checkpoint of ``textcw serve --learn`` costs after N updates: a delta against the whole model.

    python plugins/textcw-serve/benchmarks/checkpoint_cost.py MODEL [--corpus newsgroups]
        [--updates 10,1000,100000] [--full-every 32]

Opens the learning service of MODEL in this process (a fresh state folder in a temporary
directory, no HTTP: the cost measured is the checkpoint's), and for each N of ``--updates``, in
turn: sends N single-document ``/learn`` updates (documents and labels of the corpus's test
split, cycled; without ``--corpus``, short generated texts), then takes a checkpoint (the one
``POST /checkpoint`` takes: a delta of the rows the N updates touched, unless a whole model is
due, :mod:`textcw_serve.deltas`) and times it, and then a full checkpoint of the same model (as
every checkpoint was before deltas) for comparison. Prints a Markdown table: the updates, the
kind of checkpoint written, the state rows it holds, its bytes and seconds, and the full
checkpoint's bytes and seconds. Times are wall-clock seconds from the request to the reply
(writing, fsync of the file and its folder, the digest record, emptying the log).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

MAX_DOCUMENT_CHARS = 100_000  # the service's limit (textcw_serve.schemas)


def corrections(corpus: str | None, classes: list) -> tuple[list[str], list]:
    """Documents and labels the model accepts (documents over the service's limit left out)."""
    if corpus:
        import textcw

        data = textcw.load_corpus(corpus, split="test")
        pairs = [(str(d), label) for d, label in zip(data.data, data.labels) if len(str(d)) <= MAX_DOCUMENT_CHARS]
    else:
        from textcw.testing.datasets import make_documents

        docs, labels = make_documents(250, random_state=3)
        pairs = list(zip(docs, labels))
    known = {str(c) for c in classes}
    pairs = [(d, str(label)) for d, label in pairs if str(label) in known]
    if not pairs:
        raise SystemExit(f"no document of the corpus has one of the model's classes {sorted(known)[:5]}")
    return [d for d, _ in pairs], [label for _, label in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--corpus", help="e.g. newsgroups: corrections from its test split")
    parser.add_argument("--updates", default="10,1000,100000", help="comma-separated update counts")
    parser.add_argument("--full-every", type=int, default=32)
    args = parser.parse_args()
    counts = [int(n) for n in args.updates.split(",")]
    logging.basicConfig(level=logging.WARNING)

    from textcw_serve.startup import open_service

    folder = Path(tempfile.mkdtemp(prefix="textcw-serve-checkpoints-"))
    try:
        service = open_service(args.model, learn=True, state=folder / "state", checkpoint_every=0,
                               full_every=args.full_every)
        docs, labels = corrections(args.corpus, service.labels.classes)
        status = service.status()
        rows, sent = [], 0
        for n in counts:
            futures = []
            for i in range(sent, sent + n):
                futures.append(service.submit_update([docs[i % len(docs)]], [labels[i % len(docs)]]))
                if len(futures) >= 2048:  # within the service's queue bound (4,096)
                    futures.pop(0).result(600)
            for future in futures:
                future.result(600)
            sent += n
            touched = int(service.deltas.touched.sum()) if service.deltas is not None else None
            started = time.perf_counter()
            info = service.submit_checkpoint().result(600)
            seconds = time.perf_counter() - started
            size = (folder / "state" / info["file"]).stat().st_size
            started = time.perf_counter()
            with service.lock.shared():
                full = service.state.write_checkpoint(service.model, service.counters)
                service.writer.reset()
            full_seconds = time.perf_counter() - started
            full_size = full.path.stat().st_size
            if service.deltas is not None:
                service.deltas.full_checkpoint_written(full_size)
            service.last_checkpoint = full
            kind = "delta" if info["file"].startswith("delta-") else "full"
            rows.append((n, kind, touched, size, seconds, full_size, full_seconds))
        service.stop(checkpoint=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"model {args.model.name}: {status['learner']}, {status['n_features']:,} features, "
          f"{len(status['classes'])} classes; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| updates | checkpoint | rows | bytes | seconds | full checkpoint bytes | seconds |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")
    for n, kind, touched, size, seconds, full_size, full_seconds in rows:
        print(f"| {n:,} | {kind} | {'n/a' if touched is None else f'{touched:,}'} | {size:,} | {seconds:.3f} | "
              f"{full_size:,} | {full_seconds:.3f} |")


if __name__ == "__main__":
    main()
