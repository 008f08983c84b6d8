"""One exit-code rule for every command (docs/reference/cli.md, "Exit codes"): what the user
typed wrong exits 2, what is wrong with a file, the data or the environment exits 1; either way
one line, ``error: ...`` (or typer's usage panel for its own usage errors), never a traceback.
A name typed in the wrong case or misspelt gets the registered name it probably means."""

from __future__ import annotations

import pytest

from cli_run import run
from textcw.cli import build_app, build_command
from textcw.errors import (
    DataError,
    InputError,
    ParameterError,
    SpecError,
    UnknownNameError,
    UsageError,
    closest,
    did_you_mean,
)

# (argv, exit code, a fragment of the error line). {tmp} is the test's folder: {tmp}/empty.csv
# has a header and no rows, {tmp}/note.txt is a text file; nothing named nope* exists.
CASES = {
    "train": [
        (["train", "--corpus", "synthetic", "--learner", "SCW1"], 2, "did you mean 'scw1'?"),
        (["train", "--corpus", "synthetic", "--learner", "scw-1"], 2, "did you mean 'scw1'?"),
        (["train", "--corpus", "synthetic", "--learner", "pa1", "--param", "c=1"], 2,
         "unknown parameter 'c' for learner 'pa1'; valid parameters: C, "),
        (["train", "--corpus", "synthetic", "--learner", "cw-var", "--param", "ETA=0.9"], 2, "did you mean 'eta'?"),
        (["train", "--corpus", "synthetic", "--featurizer", "PRECOMPUTED"], 2, "did you mean 'precomputed'?"),
        (["train", "--corpus", "Synthetic"], 2, "did you mean 'synthetic'?"),
        (["train", "--corpus", "newsgroups:Comp"], 2, "did you mean 'newsgroups:comp'?"),
        (["train", "--corpus", "csv"], 2, "csv needs a file"),
        (["train", "--corpus", "folder"], 2, "folder needs a path"),
        (["train", "--corpus", "svmlight"], 2, "svmlight needs a file"),
        (["train", "--corpus", "csv:{tmp}/empty.csv?txt=body"], 2, "unknown option 'txt'"),
        (["train", "--corpus", "csv:{tmp}/empty.csv?text=body"], 2, "has no column 'body'"),
        (["train", "--corpus", "csv:{tmp}/semicolons.csv"], 2, "read it with csv:"),
        (["train", "--corpus", "csv:{tmp}/nope.csv"], 1, "cannot read"),
        (["train", "--corpus", "csv:{tmp}/empty.csv"], 1, "has no rows with a label"),
        (["train", "--corpus", "synthetic", "--init-model", "{tmp}/nope.textcw-model"], 1, "does not exist"),
    ],
    "predict": [
        (["predict"], 2, "give a MODEL file"),
        (["predict", "--out", "{tmp}/labels.csv"], 2, "--out applies to --input"),
        (["predict", "--input", "csv:{tmp}/empty.csv"], 2, "give a MODEL file"),
        (["predict", "{tmp}/nope.textcw-model", "--input", "xls:{tmp}/empty.csv"], 2, "give FORMAT:PATH"),
        (["predict", "{tmp}/nope.textcw-model", "--input", "csv"], 2, "csv needs a file"),
        (["predict", "{tmp}/nope.textcw-model", "--input", "csv:{tmp}/empty.csv?txt=a"], 2, "unknown option 'txt'"),
        (["predict", "{tmp}/nope.textcw-model", "--input", "csv:{tmp}/empty.csv", "--chunk-size", "0"], 2,
         "--chunk-size 0 is invalid"),
        (["predict", "{tmp}/nope.textcw-model"], 1, "does not exist"),
    ],
    "suggest": [
        (["suggest"], 2, "Missing argument"),
        (["suggest", "{tmp}/nope.textcw-model", "--strategy", "Margin"], 2, "did you mean 'margin'?"),
        (["suggest", "{tmp}/nope.textcw-model", "--input", "csv"], 2, "csv needs a file"),
        (["suggest", "{tmp}/nope.textcw-model"], 1, "does not exist"),
    ],
    "export": [
        (["export"], 2, "Missing argument"),
        (["export", "{tmp}/nope.textcw-model", "{tmp}/out.textcw"], 1, "does not exist"),
    ],
    "import": [
        (["import", "{tmp}/nope.textcw", "{tmp}/out.textcw-model", "--max-mb", "0"], 2, "--max-mb"),
        (["import", "{tmp}/nope.textcw", "{tmp}/out.textcw-model"], 1, "does not exist"),
    ],
    "inspect": [
        (["inspect"], 2, "Missing argument"),
        (["inspect", "{tmp}/note.txt"], 1, "neither a textcw model file nor an exported model"),
    ],
    "list": [
        (["list", "Learners"], 2, "did you mean 'learners'?"),
        (["list", "learners", "SCW1"], 2, "did you mean 'scw1'?"),
        (["list", "corpora", "newsgroups"], 2, "NAME applies to learners"),
    ],
    "plugins": [
        (["plugins", "extra"], 2, "unexpected extra argument"),
    ],
    "evaluate": [
        (["evaluate", "--corpus", "csv"], 2, "csv needs a file"),
        (["evaluate", "--corpus", "csv:{tmp}/empty.csv?txt=a"], 2, "unknown option 'txt'"),
        (["evaluate", "--corpus", "newsgroups:Comp"], 2, "did you mean 'newsgroups:comp'?"),
        (["evaluate", "--corpus", "synthetic", "--metric", "ECE"], 2, "did you mean 'ece'?"),
        (["evaluate", "--corpus", "synthetic", "--design", "cv:FOLDS=3"], 2, "did you mean 'folds'?"),
        (["evaluate", "--corpus", "synthetic", "--learner", "pa1:c=1", "--folds", "2"], 2, "did you mean 'C'?"),
        (["evaluate", "--corpus", "csv:{tmp}/nope.csv"], 1, "cannot read"),
    ],
    "reproduce": [
        (["reproduce", "JMLR-table2"], 2, "did you mean 'jmlr-table2'?"),
    ],
    "cache": [
        (["cache", "Info"], 2, "did you mean 'info'?"),
    ],
    "compile": [
        (["compile", "--learner", "SCW1"], 2, "did you mean 'scw1'?"),
        (["compile", "--featurizer", "TFIDF"], 2, "did you mean 'tfidf'?"),
    ],
    # the serve plugin's command, when it is installed (a command of its own rules, checked here too)
    "serve": [
        (["serve"], 2, "Missing argument"),
        (["serve", "{tmp}/nope.textcw-model"], 1, "does not exist"),
    ],
}


def _cases() -> list:
    return [pytest.param(argv, code, fragment, id=f"{command}-{k}-exit{code}")
            for command, cases in CASES.items() for k, (argv, code, fragment) in enumerate(cases)]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.csv").write_text("text,label\n")
    (tmp_path / "semicolons.csv").write_text("text;label\nhello;a\nworld;b\n")
    (tmp_path / "note.txt").write_text("not a model\n")
    return tmp_path


@pytest.mark.parametrize("argv,code,fragment", _cases())
def test_typed_mistakes_exit_2_and_file_or_data_problems_exit_1(capsys, files, argv, code, fragment):
    if argv[0] not in build_command(build_app()).commands:
        pytest.skip(f"the command {argv[0]} is not installed")
    got, out, err = run(capsys, *[a.replace("{tmp}", str(files)) for a in argv])
    assert got == code, (got, err)
    assert "Traceback" not in out + err and "error: unexpected" not in err  # the catch-all for bugs
    if "─ Error ─" in err:  # typer's own usage error: its panel, its message
        assert code == 2 and fragment in " ".join(err.replace("│", " ").split()), err
    else:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert fragment in lines[0], lines[0]


def test_every_command_is_covered():
    """A new built-in command needs its cases here: at least one typed mistake."""
    from textcw.plugins import get_plugin_manager

    commands = set(build_command(build_app(get_plugin_manager(entry_points=False))).commands)
    typed = {argv[0] for cases in CASES.values() for argv, code, _ in cases if code == 2}
    assert commands <= typed, f"commands without an exit-code case: {sorted(commands - typed)}"


def test_usage_errors_are_one_class():
    """The command line maps one class to exit 2; the name and parameter errors are of it, and
    a corpus specification typed wrong is also the InputError/DataError it used to be."""
    assert issubclass(UnknownNameError, UsageError) and issubclass(ParameterError, UsageError)
    assert issubclass(UnknownNameError, KeyError) and issubclass(ParameterError, ValueError)
    assert issubclass(SpecError, UsageError) and issubclass(SpecError, InputError)
    assert issubclass(SpecError, DataError)
    assert not issubclass(DataError, UsageError) and not issubclass(InputError, UsageError)


@pytest.mark.parametrize("typed,valid,expected", [
    ("SCW1", ["scw1", "scw2"], "scw1"),  # case only: whatever the distance
    ("TFIDF", ["tfidf", "hashing"], "tfidf"),
    ("ETA", ["C", "a", "eta"], "eta"),
    ("c", ["C", "a", "eta"], "C"),
    ("cw-stedv", ["cw-stdev", "arow"], "cw-stdev"),
    ("Comp", ["newsgroups:comp", "newsgroups:sci"], "newsgroups:comp"),  # a task named alone
    ("zzzz", ["scw1", "arow"], None),
])
def test_closest_names(typed, valid, expected):
    assert closest(typed, valid) == expected
    assert did_you_mean(typed, valid) == (f"; did you mean {expected!r}?" if expected else "")


def test_unknown_name_message_suggests_the_case_only_difference():
    message = str(UnknownNameError("learner", "SCW1", ["arow", "scw1", "scw2"]))
    assert message == "unknown learner 'SCW1'; valid learner names: arow, scw1, scw2; did you mean 'scw1'?"
