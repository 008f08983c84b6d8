"""Every install line of the README's Install section runs as written, in a fresh environment.

A copy of the checkout's shipped files (what ``git archive`` would give: textcw/, plugins/, the
project files) stands in for the user's checkout; a new virtual environment's ``pip`` stands in
for theirs, and each ``pip ...`` line of the section's blocks runs there in order, through the
shell (so ``dist/textcw-*.whl`` is expanded as a user's shell does). Then the command and
every extra and plugin the lines installed must work. ``pip`` uses the machine's own
configuration (index, find-links), as a user's does.

``python3 dev.py test`` runs it once, as a stage of its own beside the install profiles (it makes
its own environment, so the profiles would only repeat it); by hand,
``dev.py test tests/install/test_readme_install.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from hang import HANG_SECONDS

ROOT = Path(__file__).resolve().parents[2]
PROFILE = os.environ.get("TEXTCW_INSTALLED_PROFILE")
SHIPPED = ["textcw", "plugins", "pyproject.toml", "README.md", "LICENSE", "CITATION.cff"]
TIMEOUT = 1800


def install_lines(readme: str) -> list[str]:
    """The ``pip ...`` lines of the ```sh blocks of the ``## Install`` section, comments dropped."""
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("pip "):
                lines.append(command)
    return lines


def test_the_readme_leads_with_lines_that_work_from_a_checkout():
    lines = install_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    assert lines[0] == "pip install ." and "pip install dist/textcw-*.whl" in lines
    assert "pip install '.[parquet]'" in lines
    assert not any(re.match(r"pip install '?textcw\b", line) for line in lines)  # not on an index yet


@pytest.mark.slow
@pytest.mark.skipif(PROFILE not in (None, "no-extras"), reason="makes its own environment: run once, in no-extras")
def test_every_install_line_of_the_readme_runs(tmp_path):
    checkout = tmp_path / "textcw"
    checkout.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist", ".venv", "*.egg-info")
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=ignore)
        else:
            shutil.copy2(source, checkout / name)
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    # PIP_COMPILE=0 (pip's --no-compile): pip would byte-compile every file of numpy, scipy,
    # scikit-learn, ... up front; Python compiles what it imports when it imports it.
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(env_dir),
           "PIP_COMPILE": "0"}
    env.pop("PYTHONPATH", None)
    lines = install_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    for line in lines:
        run = subprocess.run(["bash", "-e", "-c", f"{line} --quiet"], cwd=checkout, env=env, capture_output=True,
                             text=True, timeout=TIMEOUT)
        assert run.returncode == 0, f"{line}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    version = subprocess.run([str(bindir / "textcw"), "--version"], capture_output=True, text=True, env=env,
                             timeout=HANG_SECONDS)
    assert version.returncode == 0 and version.stdout.startswith("textcw "), version.stderr
    for plugin in ("textcw-pixels", "textcw-example", "textcw-serve"):
        assert plugin in version.stdout, version.stdout
    imports = subprocess.run([str(bindir / "python"), "-c", "import matplotlib, distributed, pyarrow"],
                             capture_output=True, text=True, env=env, timeout=HANG_SECONDS)
    assert imports.returncode == 0, imports.stderr
    listed = subprocess.run([str(bindir / "textcw"), "list", "corpora", "--no-sizes"], capture_output=True,
                            text=True, env={**env, "TEXTCW_OFFLINE": "1"}, timeout=HANG_SECONDS)
    assert listed.returncode == 0 and "\nparquet\ttext\t" in listed.stdout, listed.stderr
    assert sys.executable  # the test's own interpreter is untouched: everything went into env_dir
