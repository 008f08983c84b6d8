#!/usr/bin/env python3
"""Set up a development environment and run the main job or the tests; needs only python3.

    python3 dev.py train [ARGS...]   set up, then `textcw train --corpus newsgroups --learner cw-stdev`
                                     (ARGS replace the default arguments)
    python3 dev.py test [ARGS...]    set up, then run every test suite on all cores (the kernels
                                     also as plain Python) and test what a user installs (below);
                                     with ARGS, only pytest ARGS
    python3 dev.py coverage          set up, then run the same suites traced by coverage and print
                                     the modules with the most lines never run (a third slower)
    python3 dev.py docs              set up, then build the documentation site into build/site
                                     (strict: a broken link or a docstring that does not render fails)
    python3 dev.py setup             only set up

Setting up makes `.venv/` and installs textcw with its test, plot, dask, docs and parquet extras plus the
first-party plugins under `plugins/`, all editable. It is skipped when nothing it installs from
has changed since the last run. Corpora are read from `$TEXTCW_DATA`; when that is unset and a
`shared/corpora` folder stands beside the checkout (our CI layout), that folder is used.
Compiled kernels are cached in `build/numba-cache/<digest of every kernel module's source>`
(NUMBA_CACHE_DIR, unless it is set): numba alone would keep a kernel whose callee in another
module changed, and an unchanged tree keeps its warm cache.

`test` names each stage as it starts and ends with one line of totals over every pytest run of
every stage, `N passed, N failed, N skipped, N expected failures` (from each run's JUnit XML file in
build/logs/results); the warnings the suites expect are left out of the console.

What a user installs is tested too: `test` builds the wheel, installs it into a fresh
environment for each of INSTALL_PROFILES (no extras, each extra, every dependency at its lowest
admitted version) and runs `tests/install` against that environment's `textcw`; beside that, it
runs every install line of the README with pip in an environment of its own. Then it checks the
public modules' types (mypy, configured in pyproject.toml) and builds the documentation strictly.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".textcw-installed"
DEFAULT_TRAIN = ["--corpus", "newsgroups", "--learner", "cw-stdev"]
KERNEL_TESTS = [f"tests/learners/test_{name}.py" for name in
                ("kernels", "multiclass_kernels", "update_rules", "multiclass_updates", "solver_fallback",
                 "variance_floor", "float32_state", "paired_state", "prefetch")]
INSTALLS = ROOT / "build" / "installs"
LOGS = ROOT / "build" / "logs"  # of the stages that run in the background
RESULTS = LOGS / "results"  # one JUnit XML file per pytest run of `test`, summed into its last line
# The console shows failures and the run's totals; the warnings the suites expect (deprecations
# tested on purpose, numpy's in the plain-Python kernels, ...) stay in each test's own report.
QUIET_WARNINGS = ["--disable-warnings"]
# name: (extras, constraints file or None)
INSTALL_PROFILES = {
    "no-extras": ("", None),
    "plot": ("plot", None),
    "dask": ("dask", None),
    "parquet": ("parquet", None),
    "minimum-versions": ("", ROOT / "tests" / "install" / "minimum-versions.txt"),
    "serve": ("", None),  # with the textcw-serve plugin, installed from its folder (PROFILE_PLUGINS)
}
# Profiles that also install first-party plugins (not editable, as a user does): name -> folders.
PROFILE_PLUGINS = {"serve": [ROOT / "plugins" / "textcw-serve"]}
# Profiles that run every test of tests/install. The others (an extra, a plugin) differ from
# no-extras only by what they add: they run the tests marked `every_profile` (the command starts,
# lists, trains, saves and predicts, and each extra's or plugin's feature works or says what to
# install), not again the command line's own behaviour (usage errors, signals, completion).
FULL_PROFILES = {"no-extras", "minimum-versions"}
# The one folder (under build/installs) each profile's environment is made in, in turn: see test_installs.
PROFILE_ENV = "profile-env"
# The README's install lines make an environment of their own with pip: a stage of its own, not a profile's.
README_TEST = "tests/install/test_readme_install.py"


def plugin_dirs() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))


def install_inputs_digest() -> str:
    digest = hashlib.sha256()
    for path in [ROOT / "pyproject.toml", *(p / "pyproject.toml" for p in plugin_dirs())]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def setup() -> None:
    if not (BIN / "python").exists():
        print("creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = install_inputs_digest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    packages = ["-e", f"{ROOT}[test,plot,dask,docs,parquet]"]
    for plugin in plugin_dirs():
        # with each plugin's own test extra (textcw-serve's page test drives Chromium via selenium)
        packages += ["-e", f"{plugin}[test]"]
    print("installing textcw and plugins into .venv", flush=True)
    # uv (the test extra's range; pip only brings it in) resolves and installs in seconds what
    # took pip minutes, from a cache shared with the installed-package tests' environments
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "uv>=0.13,<1"], check=True)
    # --compile-bytecode: as pip does by default (below, at environment())
    subprocess.run([str(BIN / "uv"), "pip", "install", "--quiet", "--compile-bytecode", "--python",
                    str(BIN / "python"), *packages], check=True)
    # the main job's kernels compiled at install (textcw compile), so its first run is not slower
    subprocess.run([str(BIN / "textcw"), "compile", "--learner", DEFAULT_TRAIN[3]], env=environment(), check=True)
    STAMP.write_text(wanted)


def kernel_sources() -> list[Path]:
    """Every module that defines compiled kernels (textcw's and the first-party plugins').

    Found by what a kernel module says (the compile decorator or numba itself), so a new kernel
    module needs no listing here; the tests' own kernels are left out (nothing else calls them).
    """
    marks = ("@kernel", "njit", "_jit import")
    candidates = [*(ROOT / "textcw").rglob("*.py"),
                  *(path for plugin in plugin_dirs() for path in plugin.rglob("*.py")
                    if "tests" not in path.relative_to(plugin).parts)]
    return sorted(p for p in candidates if any(mark in p.read_text("utf-8", errors="replace") for mark in marks))


def numba_cache_dir() -> Path:
    """A numba cache folder named by the digest of every kernel module's source.

    numba invalidates a cached kernel only when its own file changes, not when a kernel it calls
    in another module does, so a dev tree would run stale machine code: any kernel change here
    starts a fresh folder, and an unchanged tree reuses its folder (warm runs stay warm).
    """
    digest = hashlib.sha256()
    for path in kernel_sources():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    folder = ROOT / "build" / "numba-cache" / digest.hexdigest()[:16]
    stale = time.time() - 2 * 86400  # folders of sources not run for two days go
    for other in folder.parent.glob("*") if folder.parent.is_dir() else ():
        if other != folder and other.is_dir() and other.stat().st_mtime < stale:
            shutil.rmtree(other, ignore_errors=True)
    return folder


def environment() -> dict:
    env = dict(os.environ)
    shared = ROOT.parent / "shared" / "corpora"
    if not env.get("TEXTCW_DATA") and shared.is_dir():
        env["TEXTCW_DATA"] = str(shared)
    env.setdefault("NUMBA_CACHE_DIR", str(numba_cache_dir()))
    # Every test process, and every `textcw` process a test starts, imports numpy, scipy and
    # scikit-learn: without bytecode caches (.pyc) each compiles about a thousand modules from
    # source first, 3-4 s of CPU, which a user's pip install (it writes them) never pays. So the
    # environments are installed with their bytecode compiled, and an inherited
    # PYTHONDONTWRITEBYTECODE does not stop textcw's own modules from being cached either.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main(argv: list[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command not in ("train", "test", "coverage", "docs", "setup"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    setup()
    if command == "setup":
        return 0
    if command == "docs":
        return build_docs()
    if command == "train":
        cmd = [str(BIN / "textcw"), "train", *(args or DEFAULT_TRAIN)]
        return subprocess.run(cmd, cwd=ROOT, env=environment()).returncode
    suites = ["tests", *(str(p / "tests") for p in plugin_dirs() if (p / "tests").is_dir())]
    pytest = [str(BIN / "python"), "-m", "pytest"]
    if args:  # a chosen subset of the tests: the install stage is not part of it
        return subprocess.run([*pytest, *suites, *args], cwd=ROOT, env=environment()).returncode
    started = time.monotonic()
    shutil.rmtree(RESULTS, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if command == "coverage":
        stages = run_suites(pytest, suites, traced=True)
        stages.append(Stage("coverage summary"))
        coverage_summary()
        stages[-1].done()
        return report("dev.py coverage", stages, started)
    # What a user installs, the types and the documentation are checked meanwhile (they wait on
    # the network and the disk, and fill the cores where the test stages' last workers idle);
    # their output is shown when they end.
    # The kernels as plain Python too: a stage of two workers that idle behind its few long tests
    # when it runs alone (137 s wall for 104 s of CPU), so beside the suites it only fills cores.
    side = [Stage.in_background("kernels as plain Python", lambda stage: run_kernel_tests(stage, pytest)),
            Stage.in_background("installed-package tests", test_installs),
            Stage.in_background("README install lines", test_readme_install),
            Stage.in_background("type check", lambda stage: stage.run(MYPY, cwd=ROOT)),
            Stage.in_background("documentation", lambda stage: stage.run(docs_command(), cwd=ROOT,
                                                                           env=docs_environment()))]
    stages = run_suites(pytest, suites, traced=False, kernels=False)
    stages += [stage.join() for stage in side]
    return report("dev.py test", stages, started)


# worksteal: an idle worker takes tests queued for the other (the slowest take 20-30 s).
XDIST = ["-n", "auto", "--dist", "worksteal"]


def run_kernel_tests(stage: Stage, pytest: list[str], cov: tuple[str, ...] = ()) -> None:
    """The kernels' Python bodies, which numba compiles away, run as plain Python against their
    numpy twins (traced, ``cov``, they are the kernels' lines in the coverage report). As plain
    Python, numpy reports the kernels' deliberate divisions by zero (a -inf start that is
    re-bracketed, an infinite cap with a zero floor), which compiled code does not."""
    stage.pytest([*pytest, *KERNEL_TESTS, "-q", *XDIST, *cov,
                  "-W", "ignore:divide by zero encountered in scalar divide:RuntimeWarning"],
                 cwd=ROOT, env={**environment(), "NUMBA_DISABLE_JIT": "1"})


def run_suites(pytest: list[str], suites: list[str], *, traced: bool, kernels: bool = True) -> list[Stage]:
    """The test stages, each on all cores: the kernels as plain Python first (``kernels``: else
    the caller runs them beside), then every suite; ``traced``: under coverage (about a third
    more CPU on Python 3.11, whose tracer sees every line: docs/benchmarks.md, "The test
    loop"), one stage after the other, since both add to one coverage file."""
    xdist = XDIST
    cov = ["--cov=textcw", "--cov-report="] if traced else []
    stages = []
    if kernels:
        stage = Stage("kernels as plain Python")
        run_kernel_tests(stage, pytest, tuple(cov))
        stages.append(stage.done())
    stages.append(Stage("all suites"))
    # tests/install runs in the installed-package stage against every profile's environment
    # (five of them, built from the wheel); here it would only add the development environment,
    # with every extra at once, which the plot, dask and serve profiles cover one by one. Its
    # commands run as separate processes, which coverage does not trace, so no line loses
    # coverage either. (`dev.py test tests/install` still runs it here.) The 20 slowest tests
    # are listed: they are where the stage's time goes (docs/benchmarks.md, "The test loop").
    stages[-1].pytest([*pytest, *suites, "--ignore=tests/install", *xdist, "--durations=20",
                       *(["--cov-append", *cov] if traced else [])], cwd=ROOT, env=environment())
    stages[-1].done()
    return stages


def report(command: str, stages: list[Stage], started: float) -> int:
    """Print every stage's wall and CPU time, then, as the last line, the tests' totals over
    every pytest run of every stage; the worst exit code of them all."""
    code = max(stage.code for stage in stages)
    print(f"{command}: {time.monotonic() - started:.0f} s wall in all; "
          + ", ".join(f"{s.name} {s.wall:.0f} s ({s.cpu:.0f} s CPU)" for s in stages), flush=True)
    totals = test_totals([run for stage in stages for run in stage.pytest_runs])
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped, "
          f"{totals['xfailed']} expected failures", flush=True)
    return code


def test_totals(runs: list[tuple[Path, int]]) -> dict:
    """Tests passed, failed (errors included), skipped and expected to fail (strict ``xfail``:
    a documented design decision, see the suites) over pytest runs ``(JUnit XML file, exit
    code)``; a run that failed without writing its file (pytest could not start, or was killed)
    counts as one failure."""
    import xml.etree.ElementTree as ET

    totals = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    for path, code in runs:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            totals["failed"] += 1 if code != 0 else 0
            continue
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
            failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            # JUnit has no "expected failure": pytest writes one as a skip of type pytest.xfail
            xfailed = sum(1 for skip in suite.iter("skipped") if skip.get("type") == "pytest.xfail")
            totals["failed"] += failed
            totals["skipped"] += skipped - xfailed
            totals["xfailed"] += xfailed
            totals["passed"] += tests - failed - skipped
    return totals


class Stage:
    """One stage of ``dev.py test``: the worst exit code, wall and CPU time of its commands."""

    def __init__(self, name: str, log=None):
        self.name, self.log, self.code, self.cpu, self.wall = name, log, 0, 0.0, 0.0
        self.started, self.thread = time.monotonic(), None
        self.pytest_runs: list[tuple[Path, int]] = []
        where = " (in the background; its output is shown when it ends)" if log is not None else ""
        print(f"[stage] {name}: running{where}", flush=True)

    def pytest(self, cmd: list[str], **kwargs) -> int:
        """A pytest command (``cmd``), its results kept in a JUnit XML file for the totals and
        the expected warnings left out of the console."""
        RESULTS.mkdir(parents=True, exist_ok=True)
        slug = "".join(c if c.isalnum() else "-" for c in self.name)
        path = RESULTS / f"{slug}-{len(self.pytest_runs)}.xml"
        code = self.run([*cmd, *QUIET_WARNINGS, f"--junit-xml={path}"], **kwargs)
        self.pytest_runs.append((path, code))
        return code

    def run(self, cmd: list[str], **kwargs) -> int:
        if self.log is not None:
            kwargs.update(stdout=self.log, stderr=subprocess.STDOUT)
        proc = subprocess.Popen(cmd, **kwargs)
        if hasattr(os, "wait4"):  # the CPU time of the command and its children: load-independent
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu += usage.ru_utime + usage.ru_stime
        else:
            proc.wait()
        self.code = max(self.code, 1 if proc.returncode < 0 else proc.returncode)  # < 0: killed
        return proc.returncode

    def done(self, wall: float | None = None) -> Stage:
        self.wall = time.monotonic() - self.started if wall is None else wall
        load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
        print(f"[stage] {self.name}: {self.wall:.0f} s wall, {self.cpu:.0f} s CPU "
              f"(load average {load})", flush=True)
        return self

    @classmethod
    def in_background(cls, name: str, body) -> Stage:
        """``body(stage)`` in a thread, its commands' output kept for :meth:`join`."""
        LOGS.mkdir(parents=True, exist_ok=True)
        stage = cls(name, open(LOGS / f"{name.replace(' ', '-')}.log", "w+", encoding="utf-8"))

        def work():
            try:
                body(stage)
            except Exception as exc:  # noqa: BLE001 - reported with the stage's output
                print(f"{name} failed: {exc!r}", file=stage.log, flush=True)
                stage.code = max(stage.code, 1)
            stage.wall = time.monotonic() - stage.started

        stage.thread = threading.Thread(target=work, name=name)
        stage.thread.start()
        return stage

    def join(self) -> Stage:
        self.thread.join()
        self.log.seek(0)
        print(f"== {self.name} ==\n{self.log.read()}", end="", flush=True)
        self.log.close()
        return self.done(self.wall)


MYPY = [str(BIN / "python"), "-m", "mypy"]  # the public modules listed in pyproject.toml's [tool.mypy]


def docs_command() -> list[str]:
    """The documentation site, built strictly (mkdocs.yml) into build/site."""
    return [str(BIN / "mkdocs"), "build", "--strict", "--quiet", "-d", str(ROOT / "build" / "site")]


def docs_environment() -> dict:
    return {**environment(), "NO_MKDOCS_2_WARNING": "1"}


def build_docs() -> int:
    print("documentation site (mkdocs build --strict)", flush=True)
    code = subprocess.run(docs_command(), cwd=ROOT, env=docs_environment()).returncode
    index = ROOT / "build" / "site" / "index.html"
    if code == 0:
        print(f"built: {index} (open {index.as_uri()} in a browser)", flush=True)
    else:
        print(f"the documentation site did not build (exit {code}); the messages above say why", flush=True)
    return code


def coverage_summary(rows: int = 15) -> None:
    """The total line coverage and the modules with the most lines never run."""
    report = subprocess.run([str(BIN / "python"), "-m", "coverage", "report", "--sort=-miss",
                             "--skip-covered"], cwd=ROOT, capture_output=True, text=True)
    lines = report.stdout.splitlines()
    total = [line for line in lines if line.startswith("TOTAL")]
    if len(lines) < 3 or not total:
        print(report.stdout + report.stderr, flush=True)
        return
    print(f"coverage of textcw (the {rows} modules with the most lines never run, then the total):")
    print("\n".join([*lines[:2 + rows], *total]), flush=True)


def build_wheel(stage: Stage) -> Path:
    """The wheel a user would install, built afresh from this checkout."""
    out = INSTALLS / "wheel"
    for old in out.glob("*.whl"):
        old.unlink()
    stage.run([str(BIN / "uv"), "build", "--quiet", "--wheel", "--out-dir", str(out), str(ROOT)])
    (wheel,) = out.glob("textcw-*.whl")
    return wheel


def test_installs(stage: Stage) -> None:
    """Install the wheel into a fresh environment per profile and run tests/install there.

    uv makes each environment and installs into it from its own cache of downloaded and built
    wheels, shared by all profiles (seconds where pip took a minute a profile). Without
    byte-compiling every installed file up front (20 s of CPU a profile): Python compiles the
    modules a test imports when it imports them, into one folder that later profiles reuse (PYTHONPYCACHEPREFIX:
    kept inside each environment, it went with it, and each profile's first `textcw` compiled numpy... again).

    Each profile's environment is made afresh at one and the same folder (PROFILE_ENV), so that
    the profiles share compiled kernels: numba files a kernel's machine code under the full path
    of its source file, and checks the file's size and time, which uv's hard links from its
    cache keep. In folders of their own, every profile compiled every kernel it ran cold again
    (the first test that trains paid 40-140 s under load). The first profile still compiles
    cold, as a user's first run does; a profile with other pinned versions (another numba) gets
    a kernel cache of its own, so that it neither uses nor replaces the others' machine code.
    """
    wheel, failed, target = build_wheel(stage), [], INSTALLS / PROFILE_ENV
    shutil.rmtree(bytecode := INSTALLS / "pycache", ignore_errors=True)  # this run's wheel's only
    for name, (extras, constraints) in INSTALL_PROFILES.items():
        print(f"installed-package tests: {name}", file=stage.log, flush=True)
        if target.exists():
            shutil.rmtree(target)
        bindir = target / BIN.name
        requirement = f"{wheel}[{extras}]" if extras else str(wheel)
        uv = str(BIN / "uv")
        env = environment()
        env["PYTHONPYCACHEPREFIX"] = str(bytecode / ("shared" if constraints is None else f"profile-{name}"))
        if constraints is not None:  # other versions at the same paths: caches of its own
            env["NUMBA_CACHE_DIR"] = str(Path(env["NUMBA_CACHE_DIR"]) / f"profile-{name}")
        plugins = PROFILE_PLUGINS.get(name, [])
        env.update(TEXTCW_INSTALLED_BIN=str(bindir), TEXTCW_INSTALLED_EXTRAS=extras, TEXTCW_INSTALLED_PROFILE=name,
                   TEXTCW_INSTALLED_PLUGINS=",".join(p.name for p in plugins))
        if stage.run([uv, "venv", "--quiet", "--python", str(BIN / "python"), str(target)]) != 0 or stage.run(
                [uv, "pip", "install", "--quiet", "--python", str(bindir / "python"), requirement,
                 *map(str, plugins), *(["--constraint", str(constraints)] if constraints else [])]) != 0:
            failed.append(name)
            stage.pytest_runs.append((RESULTS / f"install-{name}-not-installed.xml", 1))  # counted as failed
        elif stage.pytest([str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/install",
                           f"--ignore={README_TEST}", *([] if name in FULL_PROFILES else ["-m", "every_profile"])],
                          cwd=ROOT, env=env) != 0:
            failed.append(name)
    print(f"installs: {len(INSTALL_PROFILES) - len(failed)} passed, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""), file=stage.log, flush=True)


def test_readme_install(stage: Stage) -> None:
    """Every install line of the README, run with pip as written in an environment of its own
    (README_TEST), beside the profiles rather than in one of them: it needs none of their
    environments, and most of its time is pip's (resolving, fetching, building each package in
    isolation), which overlaps the other stages' work instead of adding to the profiles' turn."""
    stage.pytest([str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", README_TEST], cwd=ROOT,
                 env=environment())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
