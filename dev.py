#!/usr/bin/env python3
"""Set up a development environment and run the main job or the tests; needs only python3.

    python3 dev.py train [ARGS...]   set up, then `textcw train --corpus newsgroups --learner cw-stdev`
                                     (ARGS replace the default arguments)
    python3 dev.py test [ARGS...]    set up, then run every test suite (ARGS go to pytest)
    python3 dev.py setup             only set up

Setting up makes `.venv/` and installs textcw with its test, plot and dask extras plus the
first-party plugins under `plugins/`, all editable. It is skipped when nothing it installs from
has changed since the last run. Corpora are read from `$TEXTCW_DATA`; when that is unset and a
`shared/corpora` folder stands beside the checkout (our CI layout), that folder is used.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".textcw-installed"
DEFAULT_TRAIN = ["--corpus", "newsgroups", "--learner", "cw-stdev"]


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
    packages = ["-e", f"{ROOT}[test,plot,dask]"]
    for plugin in plugin_dirs():
        packages += ["-e", str(plugin)]
    print("installing textcw and plugins into .venv", flush=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", *packages], check=True)
    STAMP.write_text(wanted)


def environment() -> dict:
    env = dict(os.environ)
    shared = ROOT.parent / "shared" / "corpora"
    if not env.get("TEXTCW_DATA") and shared.is_dir():
        env["TEXTCW_DATA"] = str(shared)
    return env


def main(argv: list[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command not in ("train", "test", "setup"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    setup()
    if command == "setup":
        return 0
    if command == "train":
        cmd = [str(BIN / "textcw"), "train", *(args or DEFAULT_TRAIN)]
    else:
        suites = ["tests", *(str(p / "tests") for p in plugin_dirs() if (p / "tests").is_dir())]
        cmd = [str(BIN / "python"), "-m", "pytest", *suites, *args]
    return subprocess.run(cmd, cwd=ROOT, env=environment()).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
