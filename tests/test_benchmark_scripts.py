"""Every script in ``benchmarks/`` runs, small, as a user runs it: a smoke run, so none can rot.

The benchmarks are run by hand, at sizes that take minutes; nothing else runs them, so a renamed
function or a changed option would break one silently until the next time someone measures.
Here each runs once, at a tiny size, the way its docstring says to run it:
``python benchmarks/NAME.py ARGS`` from the repository root with the development environment's
Python, in a process of its own. It must exit with 0 and print its table (each entry names lines
only that script prints, not just "some output"), write its JSON where ``--json`` points (into
the test's folder, as every other output: ``TMPDIR`` points there too), and leave nothing new in
the repository (:func:`repository_names`). The times are not checked: a smoke run shows that the
script works, not how fast anything is (the numbers at these sizes mean nothing).

:data:`SCRIPTS` lists every script with its small arguments, :data:`HELPERS` every module that is
imported by scripts but is not one; a new file in ``benchmarks/`` that is in neither fails
:func:`test_every_benchmark_script_is_smoke_run`, so a new benchmark cannot be left out.
Scripts that read the papers' corpora find them under ``$TEXTCW_DATA`` (set in CI). The two
benchmarks of the serve plugin are run by ``plugins/textcw-serve/tests/test_serve_benchmarks.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hang import HANG_SECONDS
from textcw.testing.datasets import make_documents

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
# vowpalwabbit is optional (the `bench` extra): without it the scripts timing it say so and
# still print textcw's rows, which is what a user without it expects.
HAS_VW = importlib.util.find_spec("vowpalwabbit") is not None


@dataclass(frozen=True)
class Smoke:
    """A small run of one script: its arguments (``{tmp}``: the test's folder; ``{corpus}``: a
    60-document ``folder:`` corpus made there), lines of its table it must print (each a substring
    of its standard output), and the JSON file it must write (under ``{tmp}``)."""

    args: tuple[str, ...]
    prints: tuple[str, ...]
    json: str | None = "out.json"
    says: tuple[str, ...] = ()  # on its standard error
    slow: bool = False  # many processes: started first under xdist (tests/conftest.py)


VW_EPOCH = "vowpalwabbit (cache, 1 pass)" if HAS_VW else "vowpalwabbit is not installed (pip install vowpalwabbit); skipped"

SCRIPTS = {
    "bench_calibration.py": Smoke(
        ("--text-n", "100", "--learners", "pa1", "--json", "{tmp}/out.json"),
        ("digits                   pa1                  cross-fit  accuracy",
         "synthetic-text:100:10    LogisticRegression   own        accuracy")),
    "bench_cold_start.py": Smoke(
        ("--learners", "perceptron", "--repeat", "1", "--json", "{tmp}/out.json"),
        ("learner      cache       import s    first fit s   second fit s", "perceptron   cold ",
         "perceptron   warm ", "compiled: ", "first_order.binary_epoch"), slow=True),
    "bench_cross_fit.py": Smoke(
        ("--tasks", "digits,synthetic-text", "--learners", "cw-stdev", "--text-n", "100", "--json", "{tmp}/out.json"),
        ("| task | learner | accuracy | ECE: halves re-tuned / final values |", "| digits | cw-stdev | ",
         "| synthetic-text | cw-stdev | ")),
    "bench_epoch.py": Smoke(
        ("--rows", "2000", "--features", "10000", "--repeat", "1", "--dtype", "both", "--json", "{tmp}/out.json"),
        ("data: 2,000 rows x 10,000 features", "sklearn SGD pa1", "textcw arow (diag-kl) ",
         "textcw arow (diag-kl, float32) ", VW_EPOCH)),
    "bench_hashed_tfidf.py": Smoke(
        ("--tasks", "newsgroups:sci", "--learners", "pa1", "--featurizers", "tfidf,hashed-tfidf", "--repeat", "1",
         "--json", "{tmp}/out.json"),
        ("| task | featurizer | learner | accuracy | pickle (bytes) | featurize best / median (s) |",
         "| newsgroups:sci | tfidf | pa1 | ", "| newsgroups:sci | hashed-tfidf | pa1 | ", "| newsgroups:sci | pa1 | ")),
    "bench_main_job.py": Smoke(
        ("--corpus", "folder:{corpus}", "--learner", "pa1", "--repeat", "1", "--json", "{tmp}/out.json"),
        ("condition | import | read | featurize | train | predict | stages total | textcw train (wall) | accuracy",
         "\nno cache | ", "\ncold | ", "\nwarm | "), slow=True),
    "bench_margins.py": Smoke(
        ("--tasks", "digits", "--learners", "cw-stdev", "--json", "{tmp}/out.json"),
        ("| task | learner | accuracy | ECE: earlier auto / now |", "| digits | cw-stdev | ")),
    "bench_model_load.py": Smoke(
        # --before "": not the variant that runs an earlier revision's code, whose first process
        # compiles every kernel of that copy anew (15-20 s of CPU)
        ("--corpus", "folder:{corpus}", "--sizes", "small", "--repeat", "1", "--before", "",
         "--work", "{tmp}/models", "--json", "{tmp}/out.json"),
        ("| model | words | code | file | joblib.load | persist.load | first transform | second |",
         "| small | ", " | after | ", " | compat | "), slow=True),
    "bench_multilabel.py": Smoke(
        ("--learners", "arow", "--repeat", "1", "--train-docs", "150", "--test-docs", "50", "--json", "{tmp}/out.json"),
        ("reuters:modapte: 150 training and 50 test documents, 90 labels",
         "| system | micro-F1 | macro-F1 | wall best (s) |", "| textcw arow | ",
         "| sklearn OneVsRest(LinearSVC), C tuned by 3-fold CV | ")),
    "bench_out_of_box.py": Smoke(
        ("--tasks", "digits,synthetic-text", "--learners", "pa1", "--variants", "default", "--no-sklearn",
         "--text-n", "100", "--json", "{tmp}/out.json"),
        ("### digits (1257 training, 540 test, 64 features)", "| pa1 default | ",
         "### synthetic-text:100:10 (100 training, ", "| pa1 textcw train (tfidf) | ")),
    "bench_shards.py": Smoke(
        ("--documents", "2000", "--repeat", "1", "--groups", "large", "--json", "{tmp}/out.json"),
        ("| corpus | configuration | workers | wall (s) |", "| large | one process (--stream --workers 1) | ",
         "| large | --shards 2 | ", "| large | --shards 2 --stream | "), slow=True),
    # newsgroups-subjects: the task whose files CI has for sure ($TEXTCW_DATA); python-docstrings
    # parses every installed scikit-learn module first (over a minute of CPU)
    "bench_short_text.py": Smoke(
        ("--tasks", "newsgroups-subjects", "--learners", "arow", "--max-per-class", "10", "--no-sklearn",
         "--splits", "0,1", "--cache", "{tmp}/short-text", "--json", "{tmp}/out.json"),
        ("### newsgroups-subjects (200 training, 80 test, 20 classes), split 0",
         "### newsgroups-subjects (200 training, 80 test, 20 classes), split 1",
         "| model | accuracy | ECE | confidence | log-loss | seconds |", "| arow textcw train | ",
         "### newsgroups-subjects: over 2 splits", "| arow textcw train | 0.")),
    "bench_unseen.py": Smoke(
        ("--tasks", "newsgroups-subjects", "--learners", "arow", "--max-per-class", "10",
         "--cache", "{tmp}/short-text", "--json", "{tmp}/out.json"),
        ("### newsgroups-subjects, arow (accuracy ", "| calibration | ECE | confidence - accuracy (points) |",
         "| default (drop, ", "| keep normalized temperature | ", "| drop standardized top-bias | ")),
    "short_text_reliability.py": Smoke(
        ("--tasks", "newsgroups-subjects", "--learner", "arow", "--max-per-class", "10", "--no-logistic",
         "--cache", "{tmp}/short-text", "--out", "{tmp}/figures"),
        ("newsgroups-subjects  arow, textcw train: accuracy ", "newsgroups-subjects  arow, no intercept: accuracy ",
         "wrote "), json=None),
    "bench_startup.py": Smoke(
        ("--repeat", "1", "--json", "{tmp}/out.json"),
        ("| command | wall median (s) | wall best (s) | CPU median (s) |", "| `textcw --help` | ",
         "| `textcw list learners` | ", "| `python -c 'import sklearn.base'` | ")),
    "bench_stream.py": Smoke(
        ("--documents", "2000", "--small", "2000", "--repeat", "1", "--json", "{tmp}/out.json"),
        ("| documents | workers | train (s) | docs/s training |", "| 2,000 | 1 | ", "| 2,000 | 2 | ",
         "identical accuracy across runs: True"), slow=True),
    "bench_tabular.py": Smoke(
        ("--documents", "2000", "--small", "2000", "--repeat", "1", "--notes", "10", "--json", "{tmp}/out.json"),
        ("| documents | corpus | CSV (MB) |", "| 2,000 | csv | ", "| 2,000 | synthetic-text | ",
         "same accuracy from the CSV as from the stream it was written from: True"), slow=True),
    "bench_text_features.py": Smoke(
        ("--tasks", "newsgroups:sci", "--learners", "pa1", "--features", "binary,tfidf-sublinear-hash18",
         "--json", "{tmp}/out.json"),
        ("newsgroups:sci\tbinary\tpa1\t", "newsgroups:sci\ttfidf-sublinear-hash18\tpa1\t")),
    "bench_vw.py": Smoke(
        ("--sizes", "1000", "2000", "--classes", "2", "--workers", "1", "--folder", "{tmp}/vw",
         "--compare", "same=.", "--json", "{tmp}/out.json"),
        ("featurizing 1,000 documents", "| documents | classes | system | wall (s) |",
         "| 2,000 | 2 | textcw train --stream --learner arow --workers 1 | ",
         "| documents | classes | system | runs | wall median (s) |",
         "| 2,000 | 2 | textcw train --stream --learner arow --workers 1 | 1 | ",
         "| 2,000 | 2 | textcw train --stream --learner arow --workers 1 [same] | 1 | ",
         "added from 1,000 to 2,000 documents (2 classes), textcw train --stream --learner arow --workers 1: wall ",
         *(("| 2,000 | 2 | Vowpal Wabbit 9, -b 20 --loss_function hinge | ",) if HAS_VW else ())),
        says=() if HAS_VW else ("vowpalwabbit is not installed (pip install 'textcw[bench]'): VW rows skipped",),
        slow=True),
    "multiclass_k.py": Smoke(
        ("--learners", "pa1", "--repeat", "1", "--documents", "300", "--json", "{tmp}/out.json"),
        ("20 Newsgroups train: 300 documents", "pa1        top1 ", "pa1        seq  ", "pa1        exact ")),
    "scale_figure6.py": Smoke(
        ("--task", "synthetic-text:2000", "--learners", "pa", "--shards", "2", "--workers", "1",
         "--json", "{tmp}/out.json"),
        ("synthetic-text:2000: 2,000 training, 400 test documents, 1 run(s)",
         "| learner | shards | docs/shard | single | average shard | uniform | kl |", "| pa | 2 | 1000 | ")),
    "scale_shards.py": Smoke(
        ("--documents", "2000", "--shards", "2", "--backends", "local", "--json", "{tmp}/out.json"),
        ("| backend | workers | shard phase (s) |", "| local | 1 | ", "| local | 2 | "), slow=True),
    "scale_stream.py": Smoke(
        ("--sizes", "2000", "--chunk-size", "1000", "--json", "{tmp}/out.json"),
        ("| documents | peak RSS (MB) | growth |", "| 2,000 | ", "| 2,000 in memory (no --stream) | ")),
}

# Modules of benchmarks/ that are not scripts: what they are for.
HELPERS = {
    "heldout_data.py": "the held-out tasks of bench_out_of_box.py (data that packages ship)",
    "scale_common.py": "running textcw train in a child process, for the scale benchmarks",
    "short_text_data.py": "the many-class short-text tasks (files already on the machine)",
    "short_text_calibration.py": "bench_short_text.py's row measures and calibration studies",
    "short_text_passes.py": "bench_short_text.py's study of how many passes",
    "short_text_multiclass.py": "bench_short_text.py's study of the multi-class update",
    "short_text_splits.py": "bench_short_text.py's fresh splits of a task and their summary",
    "short_text_regularisation.py": "bench_short_text.py's study of the regularisation's choice",
}

# The studies of bench_short_text.py that SCRIPTS' run of it leaves out, each run small.
STUDIES = {
    "regularisation": Smoke(
        ("--study", "regularisation", "--tasks", "newsgroups-subjects", "--learners", "arow,scw1,cw-stdev",
         "--max-per-class", "10", "--label-noise", "0.2", "--cache", "{tmp}/short-text", "--json", "{tmp}/out.json"),
        ("### newsgroups-subjects (200 training, 80 test, 20 classes), 0.2 label noise", "| arow self-tuned | 0.",
         "| arow grid search of r (chose x", "| arow halves' check (", "| scw1 self-tuned | 0.",
         "| scw1 grid search of C (chose x", "| scw1 halves' check (")),
}


def repository_names() -> set[str]:
    """What a benchmark could leave in the repository by mistake: the names in its root, in
    ``benchmarks/`` and in ``build/``. Not the tools' hidden folders in the root (``.mypy_cache``,
    ``.hypothesis``, coverage's data files) nor what ``dev.py`` and the documentation build keep
    in ``build/``: other stages and tests write those meanwhile."""
    names = {f"./{p.name}" for p in REPO.iterdir() if not p.name.startswith(".")}
    names |= {f"benchmarks/{p.name}" for p in BENCHMARKS.iterdir() if p.name != "__pycache__"}
    build = REPO / "build"
    if build.is_dir():
        names |= {f"build/{p.name}" for p in build.iterdir() if p.name not in ("installs", "logs", "numba-cache", "site")}
    return names


def folder_corpus(folder: Path) -> Path:
    """A ``folder:`` corpus of 60 short documents in 2 classes (one text file each)."""
    docs, labels = make_documents(30, random_state=0)
    for i, (doc, label) in enumerate(zip(docs, labels)):
        (folder / str(label)).mkdir(parents=True, exist_ok=True)
        (folder / str(label) / f"{i}.txt").write_text(doc, encoding="utf-8")
    return folder


def run_script(path: Path, smoke: Smoke, tmp_path: Path) -> subprocess.CompletedProcess:
    """``python PATH ARGS`` from the repository root, temporary files under ``tmp_path``."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    values = {"tmp": str(tmp_path)}
    if any("{corpus}" in a for a in smoke.args):
        values["corpus"] = str(folder_corpus(tmp_path / "corpus"))
    args = [a.format(**values) for a in smoke.args]
    # TMPDIR: the scripts' own temporary folders (models, caches, CSV files) land in tmp_path
    env = {**os.environ, "TMPDIR": str(temp)}
    return subprocess.run([sys.executable, str(path.relative_to(REPO)), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=HANG_SECONDS)


def test_every_benchmark_script_is_smoke_run():
    found = {p.name for p in BENCHMARKS.glob("*.py")}
    unlisted = sorted(found - SCRIPTS.keys() - HELPERS.keys())
    assert not unlisted, (f"benchmarks/{', '.join(unlisted)} not smoke-run: add it to SCRIPTS in "
                          f"{Path(__file__).name} with small arguments (or to HELPERS if it is not a script)")
    assert not (SCRIPTS.keys() | HELPERS.keys()) - found, "listed but gone from benchmarks/"
    assert not SCRIPTS.keys() & HELPERS.keys()
    for name in HELPERS:  # a helper is imported, never run: it has no main block
        assert "__main__" not in (BENCHMARKS / name).read_text(encoding="utf-8"), f"{name} is a script"


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if s.slow else [])
                                  for n, s in sorted(SCRIPTS.items())])
def test_benchmark_script_runs_small(name, tmp_path):
    check_small_run(name, SCRIPTS[name], tmp_path)


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_short_text_study_runs_small(study, tmp_path):
    check_small_run("bench_short_text.py", STUDIES[study], tmp_path)
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    labels = [label for rows in written.values() for label in rows]
    assert labels and not [label for label in labels if label.startswith("cw-stdev")], \
        "a learner without a regularisation parameter got rows"


def check_small_run(name: str, smoke: Smoke, tmp_path: Path) -> None:
    before = repository_names()
    done = run_script(BENCHMARKS / name, smoke, tmp_path)
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stderr[-3000:]}"
    missing = [line for line in smoke.prints if line not in done.stdout]
    assert not missing, f"{name} did not print {missing}; it printed:\n{done.stdout[-3000:]}"
    unsaid = [line for line in smoke.says if line not in done.stderr]
    assert not unsaid, f"{name} did not say {unsaid}; its standard error:\n{done.stderr[-3000:]}"
    if smoke.json:
        assert json.loads((tmp_path / smoke.json).read_text(encoding="utf-8")), f"{name} wrote an empty JSON file"
    assert repository_names() - before == set(), f"{name} wrote into the repository"

