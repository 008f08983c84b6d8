"""Every shell command the documentation shows runs, as written, on shipped data.

Each page's ```sh blocks are read line by line (continuation lines joined) and run in order in one
fresh folder per page, each line as ``bash -e -o pipefail -c LINE``, with this environment's
``textcw`` first on the ``PATH`` and the environment the other tests have (``$TEXTCW_DATA``,
offline, the session's corpus cache, so a corpus is featurized once for every page). A page whose
commands read files has a ```python block that makes them; those blocks (``Page.files``) run
first. Then what the page claims its commands print (``Page.claims``) must be on the page and in
their output (white space aside: pages wrap lines and align columns, commands print tabs).

A plain ``textcw ARGS`` line (no pipe, redirection, ``$``, ``&&``, glob or variable assignment:
the shell would only split its words) runs in-process instead, through :func:`textcw.cli.main`
with the page's folder as the working directory, the same environment, empty stdin, the
registries a new process would build (not those another test left in use), and its
stdout, stderr and exit code checked as a process's are: a process start there would prove
nothing but the start, and costs a second or more of CPU per line (importing scikit-learn and
SciPy, loading plugins and kernels). The start itself stays covered by every other line here that
runs ``textcw`` in a shell (a pipe, a redirection), by the README's lines
(``plugins/textcw-serve/tests/test_readme_commands.py`` runs each as a process) and by
:func:`test_a_plain_line_runs_in_process_as_it_runs_in_a_shell`, which runs the same lines both
ways. A page that installs a package of its own (``Page.plugin``) runs every line after the
install as a process, since only a new process sees the package.

A few kinds of line are checked instead of run, each where it is cheaper or safer to check:

- ``pip install .``: the installed-package tests (tests/install) run the README's install lines
  against a built wheel; ``pip install -e plugins/NAME`` must name a plugin installed here, at its
  version; ``pip install -e .`` on the plugin-writing page installs the package the page writes
  (its ``pyproject.toml`` and ``plugin.py``) into a folder of the test's own, not this environment;
- ``pytest PATH``: ``python3 dev.py test`` must run that suite (it is part of every CI run);
- ``textcw reproduce NAME ...``: the experiment must be registered and the line's options must
  parse up to the run itself; ``tests/cli/test_reproduce.py`` runs every experiment's ``--quick``
  form and checks its results, and a full reproduction takes minutes (``EXPENSIVE``);
- ``textcw serve MODEL``: started in the background on a free port (the serve plugin's helpers),
  the later lines' ``127.0.0.1:8000`` pointed at it, stopped at the end;
- a line ending in ``# exits with N`` must exit with N (the page shows a refusal).

``SCALED`` lists the lines that run in a smaller form (the same options on fewer documents),
because the line as written costs more than a test run can spend; the form run must differ from
the page's only by the replacement named there.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

import textcw
from tests.test_doc_examples import python_blocks
from textcw.plugins import build_registries, get_plugin_manager, use_registries

ROOT = Path(__file__).resolve().parent.parent
COMMAND_SECONDS = 600
_FENCE = re.compile(r"^```(\w*)\s*$")
_EXITS = re.compile(r"#\s*exits with (\d+)\s*$")


@dataclass(frozen=True)
class Page:
    path: str
    files: tuple[str, ...] = ()  # the ```python blocks containing one of these run first: they make files
    claims: tuple[str, ...] = ()  # printed by the commands, and said on the page
    needs: str | None = None  # a module without which the page's commands cannot run (a plugin)
    plugin: bool = False  # the page writes a plugin package (pyproject.toml + plugin.py)
    # (heading, test file): the section's commands are run, with their output checked, by that test
    elsewhere: tuple[str, str] | None = None


PAGES = [
    Page("docs/index.md", claims=("accuracy 0.9594",)),
    Page("docs/guide/quickstart.md", claims=("accuracy 0.9594  ECE 0.0115", "0.998403")),
    Page("docs/guide/your-own-data.md", files=('open("news.csv"', '"news.parquet")')),
    Page("docs/guide/choosing-a-learner.md", files=('Path("my-documents")',)),
    Page("docs/guide/probabilities.md",
         claims=('"expected_calibration_error": ', '"log_loss": ', '"brier_score": ', '"accuracy": ',
                 '"probability": "calibrated"', '"calibration": {', '"online_mistake_curve": {')),
    Page("docs/guide/explanations.md",
         claims=("why sci.med, not sci.electronics: margin over the threshold 0 +1.6267  sd 0.5516",
                 "crude\t0.999982\ttrade\t0.000005\tgrain\t0.000005",
                 "error: --top 9 is invalid: this model has 8 labels; give --top from 1 to 8",
                 "    +1.9369  sd 0.3119  z   6.2  power")),
    Page("docs/guide/active-learning.md", files=('open("pool.csv"',),
         claims=("248\t0.499606\tGULF CANADA <GOC> ACQUIRES SUEZ OIL STAKE Gulf Canada Corp said it acquired a...",
                 "this model's learner is 'pa1': use strategy 'margin' or 'random'",
                 "newsgroups:sci\tmistake 250\t•3.55")),
    Page("docs/guide/multi-label.md", files=('open("tickets.csv"',),
         claims=("reuters:modapte  arow  micro-F1 0.871  macro-F1 0.430  Hamming loss 0.0034  subset accuracy 0.835",
                 "reuters:modapte  arow  micro-F1 0.878  macro-F1 0.505  Hamming loss 0.0033  subset accuracy 0.843",
                 "reuters:modapte\tarow:record=best\t0.8779\t0.5048\t0.0033\t0.8433\t",
                 "crude\t1.000000", "2,password reset mail lands in spam,email|login,0.925267|0.998412",
                 "arow 0.9462 0.9418 0.0373 0.8657",
                 "micro-F1 0.869  macro-F1 0.862  Hamming loss 0.0933  subset accuracy 0.687",
                 "streamed in chunks of 100, 1 pass, featurized by 2 workers",
                 "micro-F1 0.922  macro-F1 0.919  Hamming loss 0.0560  subset accuracy 0.791",
                 "3 shards combined by uniform (local, 1 worker)")),
    Page("docs/guide/online.md", needs="textcw_serve", claims=("sci.med",)),
    Page("docs/guide/text-features.md", needs="textcw_serve",
         claims=("newsgroups:sci  scw1  accuracy 0.9480", "new-word.txt\tsci.electronics\t0.500000",
                 '"updates":1,"changed":true,"update_count":1', '"unseen_tokens":null', "new-word.txt\tsci.med\t0.988383")),
    Page("docs/guide/scaling-out.md", claims=("streamed in chunks of 10000, 1 pass", "4 shards combined by kl")),
    Page("docs/guide/reproducing.md"),
    Page("docs/guide/writing-a-plugin.md", plugin=True, claims=("frequent-bigrams", "textcw-mine")),
    Page("docs/evaluation.md",
         claims=("•1.47†", "1.52†", "1.67†", "1.60∗", "•1.05†", "1.20†",
                 "McNemar vs perceptron: ⋆ p<0.05, ∗ p<0.01, † p<0.001", "macro-F1", "log-loss", "–",
                 "error: --folds does not apply to design 'holdout' (its options: seed, tune, quick, noise); "
                 "leave it out or choose another design"),
         elsewhere=("### Tuning, timing, learning curves", "tests/evaluation/test_designs.py")),
    Page("docs/reproduction.md"),
    Page("docs/plugins.md", needs="textcw_example", claims=("example textcw-example 0.1.0", "balanced-winnow")),
    Page("plugins/textcw-example/README.md", needs="textcw_example", claims=("balanced-winnow", "textcw-example")),
]

# Lines too costly to run as written, and the form that runs instead (same options, fewer documents).
SCALED = {
    "textcw train --corpus synthetic-text:1e6 --learner cw-var --stream --chunk-size 10000":
        ("synthetic-text:1e6", "synthetic-text:2e4"),
}


def plain_textcw(command: str) -> list[str] | None:
    """The arguments of a line that only runs ``textcw`` (the shell would just split its words
    and drop its comment), or None when the shell does more: a pipe, redirection, ``;``, ``&&``,
    ``$``, backquotes, a glob, brace or tilde it would expand, or a variable assignment."""
    if re.search(r"[$`\\]", command):
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: the shell's error, not ours
        return None
    if not words or words[0] != "textcw" or any(set(word) <= set("();<>|&") for word in words):
        return None
    unquoted = set(command.split("#", 1)[0].split())
    if any(re.search(r"[*?\[\]{}~]", word) and word in unquoted for word in words):
        return None  # bash would expand it
    return words[1:]


def run_in_process(argv: list[str], work: Path, env: dict, monkeypatch, capfd) -> tuple[int, str]:
    """``textcw ARGV`` through :func:`textcw.cli.main` as a process would run it: in ``work``,
    with ``env`` as the environment and empty stdin; ``(exit code, stdout + stderr)``. The
    environment, folder and stdin are restored after it."""
    from textcw.cli import main
    from textcw.plugins import default_registries, use_registries

    # the registries a new process has: not those another test of this process left in use
    # (tests/evaluation keeps a superset with a toy corpus, whose name error messages would list)
    with monkeypatch.context() as patch, use_registries(default_registries()):
        patch.chdir(work)
        for name in set(os.environ) - set(env):
            patch.delenv(name)
        for name, value in env.items():
            if os.environ.get(name) != value:
                patch.setenv(name, value)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
        capfd.readouterr()
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        finally:
            out, err = capfd.readouterr()
    return code, out + err


def shell_commands(markdown: str) -> list[tuple[int, str]]:
    """``(line, command)`` of every line of the ```sh blocks, continuation lines joined, comments
    and blank lines left out."""
    commands, block, pending, start = [], None, "", 0
    for number, line in enumerate(markdown.splitlines(), 1):
        fence = _FENCE.match(line.strip())
        if fence and block is None:
            block = fence.group(1)
            continue
        if fence:
            block = None
            continue
        if block not in ("sh", "bash", "shell", "console"):
            continue
        start = start or number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = " ".join((pending + line).split()) if pending else line.strip()
        pending, first = "", start
        start = 0
        if command and not command.startswith("#"):
            commands.append((first, command))
    return commands


def without_comment(command: str) -> str:
    """The line as the shell reads it, without a trailing ``# comment``."""
    return " ".join(shlex.split(command, comments=True))


def kind(command: str) -> str:
    """How a line is treated: ``install``, ``suite``, ``reproduce``, ``serve`` or ``run``."""
    words = shlex.split(command, comments=True)
    if words[:2] == ["pip", "install"]:
        return "install"
    if words[0] == "pytest":
        return "suite"
    if words[:2] == ["textcw", "reproduce"] and len(words) > 2:
        return "reproduce"
    if words[:2] == ["textcw", "serve"]:
        return "serve"
    return "run"


def test_the_command_reader():
    page = ("text\n```sh\n# a comment\ntextcw evaluate --corpus a \\\n    --learner b  # note\n\nls\n```\n"
            "```python\nprint(1)\n```\n```\nnot sh\n```\n```console\necho a\n```\n")
    assert shell_commands(page) == [(4, "textcw evaluate --corpus a --learner b # note"), (7, "ls"), (16, "echo a")]
    assert [kind(c) for c in ("pip install -e .", "pytest plugins/x/tests", "textcw reproduce",
                              "textcw reproduce jmlr-table3 --quick  # a", "textcw serve m.textcw-model --learn",
                              "textcw train --corpus x")] == ["install", "suite", "run", "reproduce", "serve", "run"]
    assert without_comment("textcw reproduce   # the list") == "textcw reproduce"


def environment(tmp_path: Path) -> dict:
    data = os.environ.get("TEXTCW_DATA")
    assert data and Path(data).is_dir(), "TEXTCW_DATA is not set; point it at the corpora folder"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "TEXTCW_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "HOME": str(home), "MPLBACKEND": "Agg"}
    for name in ("TEXTCW_SIGNING_KEY", "TEXTCW_SIGNING_KEY_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(name, None)
    return env


def check_install(command: str, page: Page, markdown: str, work: Path, env: dict) -> None:
    words = shlex.split(command, comments=True)
    library = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", words[2]) if len(words) == 3 else None
    if library:  # the library itself: tests/install runs the README's install lines against a wheel
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
        unknown = set((library.group(1) or "").split(",")) - set(extras) - {""}
        assert not unknown, f"{command}: textcw has no extra {sorted(unknown)}"
        return
    assert words[2] == "-e" and len(words) == 4, f"an install line this test does not know: {command}"
    if words[3] == ".":
        assert page.plugin, f"{page.path}: `{command}` installs a package the page does not write"
        install_page_plugin(markdown, work, env)
        return
    folder = ROOT / words[3]
    assert (folder / "pyproject.toml").is_file(), f"{command}: {words[3]} has no pyproject.toml"
    name = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    try:
        importlib.metadata.distribution(name)
        module = importlib.import_module(name.replace("-", "_"))
    except (importlib.metadata.PackageNotFoundError, ImportError):
        raise AssertionError(f"{command}: {name} is not installed here") from None
    assert folder.resolve() in Path(module.__file__).resolve().parents, \
        f"{command}: the installed {name} is not this folder's ({module.__file__})"


def install_page_plugin(markdown: str, work: Path, env: dict) -> None:
    """Install the package the page writes into ``work/site``, which only this page's commands
    see: what ``pip install -e .`` makes of it (the entry points in a ``.dist-info`` folder, the
    package importable), without building or touching this environment."""
    tomls = re.findall(r"^```toml\n(# pyproject\.toml\n.*?)^```", markdown, flags=re.S | re.M)
    assert len(tomls) == 1, "the page shows no pyproject.toml"
    project = tomllib.loads(tomls[0])["project"]
    module = next(b.code for b in python_blocks(markdown) if "@textcw.hookimpl" in b.code)
    groups = project["entry-points"]
    (target,) = groups["textcw"].values()
    package = work / "site" / target.split(".")[0]
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / (target.split(".")[1] + ".py")).write_text(module)
    info = work / "site" / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
        for group, entries in groups.items()))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work / "site"), env.get("PYTHONPATH")]))


def check_suite(command: str) -> None:
    """``pytest FOLDER``: one of the suites ``python3 dev.py test`` runs (tests, plugins/*/tests)."""
    words = shlex.split(command, comments=True)
    assert len(words) == 2, f"an unexpected pytest line: {command}"
    folder = ROOT / words[1]
    tree = ast.parse((ROOT / "dev.py").read_text(encoding="utf-8"))
    suites = next(ast.unparse(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "suites" for t in node.targets))
    assert suites == "['tests', *(str(p / 'tests') for p in plugin_dirs() if (p / 'tests').is_dir())]", suites
    assert folder.parent.parent == ROOT / "plugins" and folder.name == "tests" and folder.is_dir(), \
        f"{command}: not a suite `python3 dev.py test` runs"
    assert (folder.parent / "pyproject.toml").is_file(), command


def check_reproduction(command: str, monkeypatch) -> None:
    """The experiment is registered and every option parses; the run itself is stopped."""
    from textcw.cli import main
    from textcw.evaluation import experiments

    words = shlex.split(command, comments=True)
    assert words[2] in experiments.names(), f"{command}: no experiment {words[2]!r}"
    if "--quick" in words:
        source = (ROOT / "tests" / "cli" / "test_reproduce.py").read_text(encoding="utf-8")
        assert '@pytest.mark.parametrize("name", experiments.names())\ndef test_quick_reproduction(' in source

    class Parsed(Exception):
        pass

    experiment = experiments.get(words[2])
    seen = {}

    def stop(**options):
        seen.update(options)
        raise Parsed

    with monkeypatch.context() as patch:
        patch.setenv("TEXTCW_DEBUG", "1")  # an error propagates, instead of the one-line exit
        patch.setattr(experiment, "run", stop)
        patch.setattr(experiments, "get", lambda name: experiment)
        try:
            main(words[1:])
        except Parsed:
            pass
        except SystemExit as exc:
            raise AssertionError(f"{command}: exited with {exc.code} before running") from None
        except Exception as exc:  # noqa: BLE001 - any refusal of the line fails it
            raise AssertionError(f"{command}: {type(exc).__name__}: {exc}") from None
        else:
            raise AssertionError(f"{command}: returned without running the experiment")
    assert seen["quick"] == ("--quick" in words) and seen["figures"] == ("--plot" in words), (command, seen)


def serve_helpers():
    path = ROOT / "plugins" / "textcw-serve" / "tests" / "test_serve_doc_commands.py"
    spec = importlib.util.spec_from_file_location("serve_doc_commands", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands_run_here(page: Page, markdown: str) -> list[tuple[int, str]]:
    """The page's command lines, but those of the section another test runs."""
    commands = shell_commands(markdown)
    if page.elsewhere is None:
        return commands
    heading, test = page.elsewhere
    assert heading in (ROOT / test).read_text(encoding="utf-8"), f"{test} no longer runs {heading!r}"
    before, section = markdown.split(heading, 1)
    first = before.count("\n") + 1
    last = first + section.split("\n### ", 1)[0].count("\n")
    return [(line, command) for line, command in commands if not first <= line <= last]


def run_page(page: Page, markdown: str, work: Path, env: dict, monkeypatch, capfd=None) -> str:
    """Run the page's commands in ``work``; their output, stdout and stderr, in order. With
    ``capfd`` (pytest's fixture) plain ``textcw`` lines run in-process (:func:`plain_textcw`)."""
    if page.files:
        blocks = [b for b in python_blocks(markdown) if b.runs and any(f in b.code for f in page.files)]
        assert blocks, f"{page.path}: no python block makes {page.files}"
        code = "".join(f"# {page.path} line {b.line}\n{b.code}" for b in blocks)  # one namespace, in order
        made = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True,
                              timeout=COMMAND_SECONDS)
        assert made.returncode == 0, f"{page.path} line {blocks[0].line}:\n{made.stderr[-3000:]}"
    commands = commands_run_here(page, markdown)
    assert commands, f"{page.path} shows no command"
    output, service = [], None
    base_env = dict(env)  # a line after a change to it (an install) runs as a process
    try:
        for line, command in commands:
            where = f"{page.path} line {line}: `{command}`"
            if kind(command) == "install":
                check_install(command, page, markdown, work, env)
                continue
            if kind(command) == "suite":
                check_suite(command)
                continue
            if kind(command) == "reproduce":
                check_reproduction(command, monkeypatch)
                continue
            if kind(command) == "serve":
                assert service is None, f"{where}: a second service"
                service = serve_helpers().Service(command, work, env)
                continue
            shell = command
            if without_comment(command) in SCALED:
                old, new = SCALED[without_comment(command)]
                shell = command.replace(old, new)
            if service is not None:
                shell = re.sub(r"(localhost|127\.0\.0\.1):8000", rf"\g<1>:{service.port}", shell)
            expected = _EXITS.search(command)
            code = int(expected.group(1)) if expected else 0
            argv = plain_textcw(shell) if capfd is not None and env == base_env else None
            if argv is not None:
                returncode, printed = run_in_process(argv, work, env, monkeypatch, capfd)
                assert returncode == code, f"{where} exited with {returncode}, not {code}:\n{printed[-5000:]}"
                output.append(printed)
                continue
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", shell], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=COMMAND_SECONDS)
            assert done.returncode == code, f"{where} exited with {done.returncode}, not {code}:\n" \
                                            f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            output.append(done.stdout + done.stderr)
    finally:
        stopped = service.stop() if service is not None else None
    if service is not None:
        assert stopped == 128 + 15, service.output()  # a clean stop after SIGTERM
    return "\n".join(output)


def test_the_scaled_lines_are_on_the_pages():
    shown = {without_comment(c) for page in PAGES
             for _, c in shell_commands((ROOT / page.path).read_text(encoding="utf-8"))}
    for command, (old, new) in SCALED.items():
        assert command in shown and old in command and old != new, command


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.path)
def test_the_claims_are_on_the_page(page):
    markdown = (ROOT / page.path).read_text(encoding="utf-8")
    for claim in page.claims:
        assert said(claim) in said(markdown), f"{page.path} no longer says {claim!r}: update Page.claims"


def test_the_designs_section_of_the_evaluation_page_is_left_to_its_test():
    (page,) = [p for p in PAGES if p.path == "docs/evaluation.md"]
    markdown = (ROOT / page.path).read_text(encoding="utf-8")
    here = commands_run_here(page, markdown)
    left = [command for line, command in shell_commands(markdown) if (line, command) not in here]
    assert [shlex.split(c)[shlex.split(c).index("--design") + 1].split(":")[0] for c in left] == \
        ["tune", "timing", "curve", "online", "combination"]
    assert len(here) == 3 and here[0][1].startswith("textcw evaluate --corpus newsgroups:sci,spam:u00 ")


def test_every_page_with_commands_is_run():
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "plugins").glob("*/README.md")]
    with_commands = {str(p.relative_to(ROOT)) for p in pages if shell_commands(p.read_text(encoding="utf-8"))}
    # run by the serve plugin's tests: test_readme_commands.py and test_serve_doc_commands.py
    elsewhere = {"README.md", "docs/serve.md", "plugins/textcw-serve/README.md"}
    assert with_commands - elsewhere == {page.path for page in PAGES}


def said(text: str) -> str:
    """``text`` with every run of white space as one space: pages wrap lines and align columns
    with spaces, the commands print tabs."""
    return " ".join(text.split())


def check_claims(page: Page, output: str) -> None:
    for claim in page.claims:
        assert said(claim) in said(output), f"{page.path}: the commands did not print {claim!r}:\n{output[-3000:]}"


# The runner itself: a broken command, a refusal that does not happen, a missing claim, a line
# that names what does not exist, each fails the page.
def run_markdown(markdown: str, tmp_path: Path, monkeypatch, capfd=None, **options) -> str:
    page = Page("synthetic.md", **options)
    work = tmp_path / "work"
    work.mkdir(parents=True)
    output = run_page(page, markdown, work, environment(tmp_path), monkeypatch, capfd)
    check_claims(page, output)
    return output


def test_which_lines_run_in_process():
    assert plain_textcw("textcw train --corpus newsgroups:sci --learner cw-stdev   # accuracy 0.9594") == \
        ["train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev"]
    assert plain_textcw('textcw train --corpus "csv:a.csv?text=body&label=topic"  # exits with 2') == \
        ["train", "--corpus", "csv:a.csv?text=body&label=topic"]
    for line in ("textcw predict m < new.csv", "cat a.csv | textcw train", "textcw train > out.txt",
                 "X=1 textcw train", "textcw train && ls", "textcw train; ls", "textcw predict $MODEL",
                 "textcw predict *.textcw-model", "textcw predict ~/m", "textcw train 2>&1", "echo textcw",
                 "textcw train &", "textcw predict `ls`", "textcw train 'unclosed"):
        assert plain_textcw(line) is None, line


class _ExtraCorpus:
    @textcw.hookimpl
    def register_corpora(self, register):
        register("extra", lambda task=None, split="train", **options: None, summary="a test's own corpus")


def test_a_plain_line_runs_in_process_as_it_runs_in_a_shell(tmp_path, monkeypatch, capfd):
    page = ("```sh\ntextcw train --help\ntextcw train --corpus toy:x --learner nope  # exits with 2\n"
            "textcw train --help | tail -2\n```\n")
    started = []
    real = subprocess.run

    class Counting:
        @staticmethod
        def run(cmd, **kwargs):
            started.append(cmd[-1])
            return real(cmd, **kwargs)

    monkeypatch.setitem(run_page.__globals__, "subprocess", Counting)
    # registries another test left in use (a corpus more, which the refusal would list) do not
    # reach the in-process line: it sees what the shell's new process sees
    extra = build_registries(get_plugin_manager(entry_points=True, extra=[_ExtraCorpus()]))
    with use_registries(extra):
        in_process = run_markdown(page, tmp_path / "a", monkeypatch, capfd)
    assert started == ["textcw train --help | tail -2"]  # the pipe is the shell's: a process
    in_shell = run_markdown(page, tmp_path / "b", monkeypatch)
    assert len(started) == 4
    assert in_process == in_shell
    assert "--corpus" in in_process and "error: " in in_process and Path.cwd() != tmp_path / "a" / "work"


def test_a_command_that_fails_fails_the_page(tmp_path, monkeypatch):
    with pytest.raises(AssertionError, match=r"synthetic.md line 3: `false` exited with 1, not 0"):
        run_markdown("```sh\necho one\nfalse\necho two > two.txt\n```\n", tmp_path, monkeypatch)
    assert not (tmp_path / "work" / "two.txt").exists()  # the lines after it do not run


def test_a_failure_inside_a_pipe_fails_the_page(tmp_path, monkeypatch):
    with pytest.raises(AssertionError, match=r"line 2: `textcw train --corpus nope:x \| head -1` exited with 2"):
        run_markdown("```sh\ntextcw train --corpus nope:x | head -1\n```\n", tmp_path, monkeypatch)


def test_a_refusal_must_happen_with_its_exit_code(tmp_path, monkeypatch):
    output = run_markdown("```sh\necho refused >&2; exit 2  # exits with 2\n```\n", tmp_path, monkeypatch,
                          claims=("refused",))
    assert output == "refused\n"
    with pytest.raises(AssertionError, match=r"exited with 0, not 2"):
        run_markdown("```sh\ntrue  # exits with 2\n```\n", tmp_path / "again", monkeypatch)


def test_a_claim_the_commands_do_not_print_fails_the_page(tmp_path, monkeypatch):
    with pytest.raises(AssertionError, match=r"did not print 'accuracy 0.9594'"):
        run_markdown("```sh\necho accuracy 0.9593\n```\n", tmp_path, monkeypatch, claims=("accuracy 0.9594",))


def test_the_files_block_runs_first_and_must_work(tmp_path, monkeypatch):
    page = "```python\nopen('a.txt', 'w').write('made')\n```\n```sh\ncat a.txt\n```\n"
    assert run_markdown(page, tmp_path, monkeypatch, files=("a.txt",)) == "made"
    with pytest.raises(AssertionError, match=r"(?s)synthetic.md line 1:\n.*ZeroDivisionError"):
        run_markdown("```python\n1 / 0  # a.txt\n```\n```sh\ntrue\n```\n", tmp_path / "again", monkeypatch,
                     files=("a.txt",))


@pytest.mark.parametrize(("line", "message"), [
    ("textcw reproduce jmlr-table9 --quick", "no experiment 'jmlr-table9'"),
    ("textcw reproduce jmlr-table3 --plot-format gif", "exited with 2 before running"),
    ("textcw reproduce jmlr-table3 --fast", "exited with 2 before running"),
    ("pytest plugins/textcw-nothing/tests", "not a suite"),
    ("pip install -e plugins/textcw-example/tests", "pyproject.toml"),
    ("pip install -e benchmarks", "pyproject.toml"),
    ("pip install -e .", "installs a package the page does not write"),
    ("pip install '.[plots]'", "textcw has no extra ['plots']"),
])
def test_a_checked_line_that_is_wrong_fails_the_page(line, message, tmp_path, monkeypatch):
    with pytest.raises(AssertionError, match=re.escape(message)):
        run_markdown(f"```sh\n{line}\n```\n", tmp_path, monkeypatch)


def test_a_full_reproduction_is_checked_up_to_its_run(monkeypatch):
    check_reproduction("textcw reproduce jmlr-table3 --plot figures/ --plot-format png,svg --json-out t.json",
                       monkeypatch)
    assert not Path("figures").exists() and not Path("t.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.path)
def test_every_command_of_the_page_runs(page, tmp_path, monkeypatch, capfd):
    if page.needs is not None:
        pytest.importorskip(page.needs, reason=f"{page.path} needs {page.needs}, which is not installed")
    work = tmp_path / "work"
    work.mkdir()
    env = environment(tmp_path)
    output = run_page(page, (ROOT / page.path).read_text(encoding="utf-8"), work, env, monkeypatch, capfd)
    check_claims(page, output)
