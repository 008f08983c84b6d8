"""Loading a saved model: the README's main job (20 Newsgroups, ``cw-stdev``), before and after
the fitted vocabulary was pickled as arrays (:mod:`textcw.features.vocabulary`).

Before, the featurizer's state was a dict of 130,107 Python strings (``vocabulary_``) and a list
of as many floats (``idf_``): joblib's unpickler is pure Python and ran one opcode per word, and
the first ``transform`` then encoded every word again to build the compiled look-up table. After,
both are NumPy arrays, which joblib writes out of band and reads as one block; the table is
filled from those arrays.

What is measured, for each model, in fresh processes (``--repeat``, median):

- ``joblib.load``: the payload (already in memory) unpickled;
- ``persist.load``: :func:`textcw.persist.load` of the file (read, sha256, unpickle);
- ``first transform``: the loaded featurizer's first ``transform`` of one short document (the
  kernels already loaded by an earlier, untimed model in the same process: this is the cost
  that belongs to the model), and the second, for comparison.

"before" runs the code of a git revision (``--before``, default ``HEAD``, extracted with ``git
archive`` into a temporary folder and put first on ``PYTHONPATH``; ``--before ""`` leaves it out,
as its first process compiles every kernel of that tree anew) on a file in its format;
"after" runs this working tree on the same model saved in the new format; "compat" runs this
working tree on the old file (models saved before keep loading). The same fitted model is in
all three: it is trained once by this tree (``python -m textcw train``) and written in the old
format with the featurizer's previous ``__getstate__`` (a dict and a list).

Sizes: the main job's model and the same corpus with fewer words (``max_features``) and with
bigrams, to show load time against model size.

Run by hand (not a test): ``TEXTCW_DATA=... python benchmarks/bench_model_load.py [--repeat 5]
[--sizes main,small,bigrams] [--work DIR]``. It trains each model once (a minute or two each on
two cores). Check the load average it prints: on a busy machine every number grows.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# name: (what it is, extra `textcw train` arguments)
SIZES = {
    "small": ("20 Newsgroups, 20,000 words", ["--featurizer-param", "max_features=20000"]),
    "main": ("20 Newsgroups (the README's main job)", []),
    "bigrams": ("20 Newsgroups, words and bigrams seen twice",
                ["--featurizer-param", "ngram_range=[1,2]", "--featurizer-param", "min_df=2"]),
}
DOC = "The space shuttle launch was delayed again; NASA expects a new date next week."

# The old file: the featurizer pickled as textcw did before the arrays (its state the instance's
# __dict__ less the compiled table), every other object as this tree pickles it.
DOWNGRADE = r"""
import io, sys, warnings, zipfile, hashlib, json
import joblib
warnings.simplefilter("ignore")
import textcw.persist as persist
from textcw.features.text import WordCounts
from textcw.features.weighting import TfidfWords
model = persist.load(sys.argv[1])
old = lambda self: {k: v for k, v in self.__dict__.items() if k != "_native_table"}
WordCounts.__getstate__ = old
TfidfWords.__getstate__ = old
persist.save(model, sys.argv[2])
"""

CHILD = r"""
import io, json, sys, time, warnings, zipfile
warnings.simplefilter("ignore")
import joblib
import textcw.persist as persist
path, doc = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(path) as archive:
    payload = archive.read("model.joblib")
warm = persist.load(path)  # imports, page cache and the compiled kernels, untimed
warm[0].transform([doc + " warm"])
del warm
clock = time.perf_counter
t0 = clock(); joblib.load(io.BytesIO(payload)); t1 = clock()
model = persist.load(path); t2 = clock()
featurizer = model[0]
featurizer.transform([doc]); t3 = clock()
featurizer.transform([doc]); t4 = clock()
print(json.dumps({"joblib": t1 - t0, "persist": t2 - t1, "first": t3 - t2, "second": t4 - t3,
                  "terms": len(featurizer.vocabulary_), "module": persist.__file__}))
"""


def extract(revision: str, folder: Path) -> Path:
    """The ``textcw`` package of ``revision``, in ``folder`` (git archive: the working tree is
    not touched)."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", revision, "textcw"], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(folder, filter="data")
    return folder


def run(code: str, args: list[str], pythonpath: Path | None = None) -> str:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True,
                          text=True, cwd=tempfile.gettempdir())
    return (done.stdout.strip().splitlines() or [""])[-1]


def train(size: str, corpus: str, learner: str, out: Path) -> None:
    if out.exists():
        return
    print(f"training {size} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "textcw", "train", "--corpus", corpus, "--learner", learner,
                    *SIZES[size][1], "--out", str(out)], check=True, cwd=tempfile.gettempdir(),
                   stdout=subprocess.DEVNULL)


def measure(variants: list[tuple], repeat: int) -> list[dict]:
    """Medians over ``repeat`` rounds; each round runs every variant once, in turn, so that a
    change in the machine's load falls on all of them alike."""
    runs: list[list[dict]] = [[] for _ in variants]
    for _ in range(repeat):
        for runs_of, (path, pythonpath, tree) in zip(runs, variants):
            result = json.loads(run(CHILD, [str(path), DOC], pythonpath))
            assert Path(result["module"]).is_relative_to(tree), result["module"]  # the intended code ran
            runs_of.append(result)
    return [{key: statistics.median(r[key] for r in rs) for key in ("joblib", "persist", "first", "second")}
            | {"terms": rs[0]["terms"]} for rs in runs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="newsgroups")
    parser.add_argument("--learner", default="cw-stdev")
    parser.add_argument("--sizes", default="small,main,bigrams")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default="HEAD",
                        help="git revision whose code loads the old files ('': leave that variant out)")
    parser.add_argument("--work", type=Path, help="folder for the models (kept, so reruns skip training)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-model-load-"))
    work.mkdir(parents=True, exist_ok=True)
    before_tree = extract(args.before, Path(tempfile.mkdtemp(prefix="textcw-before-"))) if args.before else None
    start = os.getloadavg()
    rows = []
    for size in args.sizes.split(","):
        new = work / f"{size}.textcw-model"
        old = work / f"{size}-old.textcw-model"
        train(size, args.corpus, args.learner, new)
        if not old.exists():
            run(DOWNGRADE, [str(new), str(old)])
        # Each tree reads a file in its own format; "compat" is this tree on the old file.
        variants = {"before": (old, before_tree, before_tree), "after": (new, None, REPO), "compat": (old, None, REPO)}
        if before_tree is None:
            del variants["before"]
        for label, result in zip(variants, measure(list(variants.values()), args.repeat)):
            path = variants[label][0]
            rows.append({"size": size, "code": label, "file_mb": path.stat().st_size / 1e6, **result})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(f"\nload average (1, 5, 15 min) at the start {start[0]:.2f} {start[1]:.2f} {start[2]:.2f}, at the end "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores); median of {args.repeat} processes\n")
    print("| model | words | code | file | joblib.load | persist.load | first transform | second |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['size']} | {r['terms']:,} | {r['code']} | {r['file_mb']:.1f} MB | "
              f"{r['joblib'] * 1e3:.0f} ms | {r['persist'] * 1e3:.0f} ms | {r['first'] * 1e3:.1f} ms | "
              f"{r['second'] * 1e3:.1f} ms |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
