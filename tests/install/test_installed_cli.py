"""The ``textcw`` command as a user installs it, run as a separate process.

By default these tests run the development environment's ``textcw``. ``python3 dev.py test``
runs them again against fresh environments made from the built wheel: without extras, with each
extra, and with every dependency at the lowest version ``pyproject.toml`` admits. There
``TEXTCW_INSTALLED_BIN`` names the environment's scripts folder and ``TEXTCW_INSTALLED_EXTRAS``
the extras it has (comma-separated), so each test knows what the user should see. The profiles
of one extra or plugin run only the tests marked ``every_profile`` (``dev.py``'s FULL_PROFILES
run all).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hang import HANG_SECONDS

BIN = Path(os.environ.get("TEXTCW_INSTALLED_BIN") or Path(sys.executable).parent)
EXTRAS = set(filter(None, os.environ.get("TEXTCW_INSTALLED_EXTRAS", "plot,dask").split(",")))
TEXTCW = str(BIN / "textcw")
TIMEOUT = HANG_SECONDS  # a hang guard on each command (tests/hang.py)


def textcw(*args, cwd=None, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "TEXTCW_OFFLINE": "1", "COLUMNS": "100"}
    env.pop("TEXTCW_DEBUG", None)
    return subprocess.run([TEXTCW, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=TIMEOUT, **kwargs)


@pytest.mark.every_profile
def test_help_lists_every_command():
    run = textcw("--help")
    assert run.returncode == 0, run.stderr
    for command in ("train", "predict", "export", "import", "inspect", "list", "plugins", "evaluate",
                    "reproduce"):
        assert command in run.stdout
    assert "<bool>" not in run.stdout and "<list" not in run.stdout  # conventional metavars
    assert "--install-completion" in run.stdout


@pytest.mark.every_profile
def test_version_names_textcw_python_and_the_dependencies():
    from textcw import __version__

    run = textcw("--version")
    assert run.returncode == 0, run.stderr
    rows = dict(line.split(None, 1) for line in run.stdout.splitlines())
    assert rows["textcw"] == __version__
    assert {"python", "numpy", "scipy", "scikit-learn", "numba", "typer"} <= set(rows)


@pytest.mark.every_profile
def test_the_cli_never_imports_click():
    """typer carries its own Click; a module that imports ``click`` needs an undeclared package."""
    code = ("import sys, textcw.cli as c; c.build_command(c.build_app()); "
            "print(sorted(m for m in sys.modules if m == 'click' or m.startswith('click.')))")
    run = subprocess.run([str(BIN / "python"), "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stderr


def test_stateless_featurizers_need_no_fit(tmp_path):
    """On every admitted scikit-learn (1.6 reports requires_fit=True for HashingVectorizer in its
    public tags), sharded training must know that hashing needs no fit: otherwise the driver
    featurizes the whole split before any shard starts. Run from an empty folder, so that the
    installed textcw is imported, not the checkout's."""
    code = ("import textcw.scale.shards as s, textcw; "
            "print(s.needs_fit(textcw.make_featurizer('hashing')), s.needs_fit(textcw.make_featurizer('binary-bow')))")
    run = subprocess.run([str(BIN / "python"), "-W", "error::FutureWarning", "-c", code], capture_output=True,
                         text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.split() == ["False", "True"], run.stderr


@pytest.mark.every_profile
def test_list_learners_and_one_learner_s_parameters():
    run = textcw("list", "learners")
    assert run.returncode == 0 and "cw-stdev" in run.stdout and "arow" in run.stdout, run.stderr
    run = textcw("list", "learners", "cw-stdev")
    assert run.returncode == 0, run.stderr
    assert "eta" in run.stdout and "0.99" in run.stdout and "covariance" in run.stdout


USAGE_ERRORS = [
    ([], "Usage: textcw"),  # no arguments: the help, as a usage error
    (["train", "--lerner", "arow", "--corpus", "newsgroups"], "--learner"),  # unknown option, suggested
    (["train", "--learner", "arow"], "Missing option '--corpus'"),
    (["train", "--corpus", "newsgroups", "--learner", "arow", "--epochs", "three"],
     "Invalid value for '--epochs'"),
    (["trian"], "No such command 'trian'"),
]


@pytest.mark.parametrize("argv,message", USAGE_ERRORS, ids=["no-args", "unknown-option", "missing-option",
                                                             "bad-value", "unknown-command"])
def test_usage_errors_exit_2_with_typer_s_message(argv, message):
    run = textcw(*argv)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "unexpected" not in run.stderr


def test_unknown_learner_suggests_the_name():
    run = textcw("train", "--corpus", "newsgroups:sci", "--learner", "cw-stedv")
    assert run.returncode == 2
    assert run.stderr.startswith("error: unknown learner 'cw-stedv'") and "did you mean 'cw-stdev'?" in run.stderr


# Not every profile: an extra changes none of these commands (the no-extras and minimum-versions
# profiles run it), and each extra's own test below trains through the installed command.
@pytest.mark.corpus
def test_train_save_inspect_and_predict(tmp_path, data_home):
    model = tmp_path / "sci.joblib"
    run = textcw("train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev", "--out", model, "--json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["n_train"], result["n_test"], result["learner"]) == (1185, 789, "cw-stdev")
    assert result["accuracy"] > 0.9 and run.stderr.strip() == f"saved {model}"
    doc = tmp_path / "doc.txt"
    doc.write_text("the patient's doctor prescribed a new medicine for the disease")
    run = textcw("predict", model, doc)
    assert run.returncode == 0 and run.stdout == f"{doc}\tsci.med\n", run.stderr
    run = textcw("inspect", model)
    assert run.returncode == 0 and "cw-stdev" in run.stdout, run.stderr


LONG_JOB = ["--verbose", "train", "--corpus", "synthetic-text:3000000", "--learner", "cw-stdev",
            "--epochs", "50"]


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_says_so_and_leaves_no_file(tmp_path, sig, code):
    model = tmp_path / "m.joblib"
    env = {**os.environ, "TEXTCW_OFFLINE": "1"}
    proc = subprocess.Popen([TEXTCW, *LONG_JOB, "--out", str(model)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        # The barrier: the command logs that it starts the work, after its handlers are set.
        first = proc.stderr.readline()
        assert first.startswith("training cw-stdev on synthetic-text:3000000"), first
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert err.strip().splitlines() == ["interrupted"] and out == ""
    assert list(tmp_path.iterdir()) == []  # neither the model nor a temporary file


@pytest.mark.every_profile
@pytest.mark.corpus
def test_plots_need_the_plot_extra(tmp_path, data_home):
    figures = tmp_path / "fig"
    run = textcw("evaluate", "--corpus", "newsgroups:sci", "--learner", "pa", "--folds", "2", "--sample", "200",
                 "--plot", figures)
    if "plot" in EXTRAS:
        assert run.returncode == 0, run.stderr
        assert sorted(p.suffix for p in figures.iterdir()) and all(p.suffix == ".png" for p in figures.iterdir())
    else:
        assert run.returncode == 1 and "pip install 'textcw[plot]'" in run.stderr
        assert not figures.exists()


@pytest.mark.every_profile
def test_a_dask_cluster_needs_the_dask_extra():
    # cw-stdev: the profiles share compiled kernels (dev.py), and the earlier profiles have
    # compiled this learner's, so the dask profile compiles none for this test alone
    run = textcw("train", "--corpus", "synthetic-text:4000", "--learner", "cw-stdev", "--shards", "2",
                 "--backend", "dask", "--workers", "1", "--featurizer-param", "n_features=4096", "--json")
    if "dask" in EXTRAS:
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["backend"] == "dask"
    else:
        assert run.returncode == 2 and "pip install 'textcw[dask]'" in run.stderr


def test_an_interrupted_sharded_run_leaves_no_worker_process(tmp_path):
    psutil = pytest.importorskip("psutil")
    env = {**os.environ, "TEXTCW_OFFLINE": "1"}
    proc = subprocess.Popen([TEXTCW, *LONG_JOB, "--shards", "2", "--workers", "2", "--out", str(tmp_path / "m")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr.readline().startswith("training cw-stdev")
        parent = psutil.Process(proc.pid)
        workers = []
        for _ in range(2400):  # the barrier: both worker processes exist (bounded: 2 minutes)
            workers = parent.children(recursive=True)
            if len(workers) >= 2:
                break
            psutil.wait_procs([parent], timeout=0.05)
        assert len(workers) >= 2, "the shard workers never started"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 143 and err.strip().splitlines() == ["interrupted"], err
    _, alive = psutil.wait_procs(workers, timeout=60)
    assert alive == [], f"worker processes left running: {alive}"
    assert list(tmp_path.iterdir()) == []


def test_shell_completion_offers_commands_and_options():
    """What bash asks on <TAB> (the protocol --install-completion sets up)."""
    env = {**os.environ, "_TEXTCW_COMPLETE": "complete_bash", "COMP_WORDS": "textcw tr", "COMP_CWORD": "1"}
    run = subprocess.run([TEXTCW], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert run.returncode == 0 and run.stdout.split() == ["train"], (run.stdout, run.stderr)
    env.update(COMP_WORDS="textcw train --lea", COMP_CWORD="2")
    run = subprocess.run([TEXTCW], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert run.returncode == 0 and run.stdout.split() == ["--learner"], (run.stdout, run.stderr)


@pytest.mark.parametrize("option,typo,suggestion", [
    ("--corpus", "newsgroup", "newsgroups"), ("--corpus", "newsgroups:cmop", "newsgroups:comp"),
    ("--featurizer", "binary-bwo", "binary-bow")])
def test_unknown_corpus_task_and_featurizer_names_are_suggested(option, typo, suggestion):
    args = {"--corpus": "newsgroups", "--learner": "pa", option: typo}
    run = textcw("train", *[x for pair in args.items() for x in pair])
    assert run.returncode == 2 and f"did you mean '{suggestion}'?" in run.stderr, run.stderr
