"""Every shell command in ``plugins/textcw-serve/README.md`` and ``docs/serve.md`` runs as written.

The ```` ```sh ```` blocks of each document are run in order, in a fresh folder, with the
environment the other tests have (``$TEXTCW_DATA``, offline, a fresh cache). ``textcw serve``
starts in the background, where the document starts it, on a free loopback port (given with
``--port``; the later commands' ``localhost:8000`` is pointed at it) and is stopped with SIGTERM
at the end. ``pip install -e FOLDER`` is not run again (it would reinstall into the environment
the tests run in): the folder must be the plugin that is installed, at its version. Every other
line must exit with 0, and every reply of the service must be JSON without an error. Then what
the documents claim: the recipe learns a word the model never saw, and each reply a document
shows (a ```` ```json ```` block after a command) is the service's reply, its numbers to the
precision shown, as is the temperature its start-up warning shows; a ``/predict`` with ``top`` or
``explain`` agrees with the plain prediction and its explanation adds up, and ``/suggest`` ranks
most informative first. docs/serve.md serves a multi-label model too (a second service, which the
commands after it reach): its correction gives a ticket both tags, and the word it never saw.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = [REPO / "plugins" / "textcw-serve" / "README.md", REPO / "docs" / "serve.md"]
COMMAND_SECONDS = 600
START_SECONDS = 120
_FENCE = re.compile(r"^```(\w*)\s*$")


def shell_commands(markdown: str) -> list[str]:
    """The command lines of the ```` ```sh ```` blocks, continuation lines joined, comments and
    blank lines left out."""
    commands, block, pending = [], None, ""
    for line in markdown.splitlines():
        fence = _FENCE.match(line.strip())
        if fence and block is None:
            block = fence.group(1)
            continue
        if fence:
            block = None
            continue
        if block not in ("sh", "bash", "shell"):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


class Shown(float):
    """A number as a document shows it: the value, and the literal (its precision)."""

    def __new__(cls, literal: str):
        number = super().__new__(cls, literal)
        number.literal = literal
        return number

    def tolerance(self) -> float:
        """Half a unit of the last digit shown (``0.3161``: 5e-5; ``2.25e-06``: 5e-9)."""
        mantissa, _, exponent = self.literal.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def shown_replies(markdown: str) -> list[tuple[str, object]]:
    """``[(command, reply)]``: each ```` ```json ```` block that follows a ```` ```sh ```` block,
    as the reply of that block's last command, its numbers kept as :class:`Shown`."""
    out, block, lines, last = [], None, [], None
    for line in markdown.splitlines():
        fence = _FENCE.match(line.strip())
        if fence and block is None:
            block, lines = fence.group(1), []
            continue
        if fence:
            if block in ("sh", "bash", "shell"):
                last = (shell_commands("```sh\n" + "\n".join(lines) + "\n```") or [None])[-1]
            elif block == "json" and last is not None:
                out.append((last, json.loads("\n".join(lines), parse_float=Shown, parse_int=Shown)))
                last = None
            else:
                last = None
            block = None
            continue
        if block is not None:
            lines.append(line)
    return out


def differences(shown, actual, where: str = "reply") -> list[str]:
    """Where ``actual`` (a service's reply) is not what the document shows: keys, labels and
    texts exactly, numbers to the precision shown."""
    if isinstance(shown, dict):
        if not isinstance(actual, dict) or set(shown) != set(actual):
            return [f"{where}: shown keys {sorted(shown)}, the service gave {actual!r}"]
        return [d for key in shown for d in differences(shown[key], actual[key], f"{where}.{key}")]
    if isinstance(shown, list):
        if not isinstance(actual, list) or len(shown) != len(actual):
            return [f"{where}: shown {len(shown)} items, the service gave {actual!r}"]
        return [d for i, (a, b) in enumerate(zip(shown, actual)) for d in differences(a, b, f"{where}[{i}]")]
    if isinstance(shown, Shown):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)) or \
                abs(actual - shown) > shown.tolerance() * (1 + 1e-9):
            return [f"{where}: shown {shown.literal}, the service gave {actual!r}"]
        return []
    return [] if shown == actual else [f"{where}: shown {shown!r}, the service gave {actual!r}"]


def test_the_shown_replies_are_read_and_compared_at_their_precision():
    text = ('```sh\ncurl a \\\n  -d 1\n```\n```json\n{"p": 0.3161, "q": 2.25e-06, "n": 1, "s": "x"}\n```\n'
            "```sh\ncurl b\n```\nno reply shown\n```\nplain\n```\n")
    ((command, reply),) = shown_replies(text)
    assert command == "curl a    -d 1"
    assert differences(reply, {"p": 0.31614, "q": 2.254e-06, "n": 1, "s": "x"}) == []
    assert differences(reply, {"p": 0.3162, "q": 2.25e-06, "n": 1, "s": "x"}) == \
        ["reply.p: shown 0.3161, the service gave 0.3162"]
    assert differences(reply, {"p": 0.3161, "q": 2.26e-06, "n": 2, "s": "y"}) == [
        "reply.q: shown 2.25e-06, the service gave 2.26e-06", "reply.n: shown 1, the service gave 2",
        "reply.s: shown 'x', the service gave 'y'"]
    assert differences(reply, {"p": 0.3161}) != []


def test_the_command_reader():
    text = "x\n```sh\n# a comment\nfoo a \\\n    b  # note\n\nbar\n```\n```json\n{}\n```\n```\nnot sh\n```\n"
    assert shell_commands(text) == ["foo a      b  # note", "bar"]


PLAIN_FIELDS = {"label", "probabilities", "decision", "margin"}


def check_answers(reply: dict) -> None:
    """A ``/predict`` reply's ``top`` and ``explanation``, when there: the best label is the
    prediction's, with its probability, and the explanation adds up to its margin."""
    for row in reply["predictions"]:
        assert set(row) - PLAIN_FIELDS <= {"top", "explanation"}, row
        if "top" in row:
            assert row["top"][0]["label"] == row["label"], row
            assert row["top"][0]["probability"] == row["probabilities"][row["label"]], row
        if "explanation" in row:
            e = row["explanation"]
            assert e["label"] == row["label"] and abs(e["margin"] - row["margin"]) <= 1e-9, row
            total = sum(t["contribution"] for t in e["terms"]) + e["rest"] + e["intercept"]
            assert abs(total - e["margin"]) <= 1e-9, row


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def check_pip_install(command: str) -> None:
    words = shlex.split(command, comments=True)
    assert words[:3] == ["pip", "install", "-e"] and len(words) == 4, f"unexpected install line: {command}"
    folder = REPO / words[3]
    name = tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]
    import textcw_serve

    assert name == "textcw-serve" and importlib.metadata.version(name) == textcw_serve.__version__, \
        f"{command}: {name} is not the installed plugin"


class Service:
    def __init__(self, command: str, cwd: Path, env: dict):
        self.port = free_port()
        self.log = cwd / f"serve-{self.port}.log"
        self.handle = open(self.log, "wb")
        line = command.split("#", 1)[0].strip() + f" --port {self.port}"
        self.proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=cwd, env=env, stdout=self.handle,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_SECONDS
        while f"on http://127.0.0.1:{self.port}/" not in self.output():
            assert self.proc.poll() is None, f"`{command}` exited with {self.proc.returncode}: {self.output()}"
            assert time.monotonic() < deadline, f"`{command}` did not start: {self.output()}"
            time.sleep(0.1)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(START_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(START_SECONDS)
        self.handle.close()
        return code


def run_document(document: Path, cwd: Path, env: dict) -> tuple[list[tuple[str, str, int]], list[Service]]:
    """Run the document's commands; ``[(command, output, service)]`` (``service``: the index of
    the service started last before the command, -1 before any) and the services started."""
    outputs, services = [], []
    try:
        for command in shell_commands(document.read_text()):
            if command.startswith("pip install"):
                check_pip_install(command)
                continue
            if re.match(r"^textcw serve \S+\.textcw-model", command):
                services.append(Service(command, cwd, env))
                continue
            if services:
                command = re.sub(r"(localhost|127\.0\.0\.1):8000", rf"\g<1>:{services[-1].port}", command)
            done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=COMMAND_SECONDS)
            assert done.returncode == 0, f"{document.name}: `{command}` exited with {done.returncode}:\n" \
                                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            outputs.append((command, done.stdout, len(services) - 1))
    finally:
        codes = [service.stop() for service in services]
    # a clean stop: the exit code of SIGTERM (128 + 15), after the final checkpoint
    assert codes == [128 + signal.SIGTERM] * len(services), [s.output() for s in services]
    return outputs, services


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_command_runs_as_written_and_the_recipe_learns_a_new_word(document, tmp_path):
    data = os.environ.get("TEXTCW_DATA")
    assert data and Path(data).is_dir(), "TEXTCW_DATA is not set; point it at the corpora folder"
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "TEXTCW_OFFLINE": "1", "TEXTCW_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    env.pop("TEXTCW_SIGNING_KEY", None)
    env.pop("TEXTCW_SIGNING_KEY_FILE", None)
    work = tmp_path / "work"
    work.mkdir()
    outputs, services = run_document(document, work, env)

    assert all("(learning)" in service.output() for service in services)
    assert len(services) == (2 if document.name == "serve.md" else 1)
    replies, tagged = {}, {}  # the topic filter's replies; the multi-label model's (docs/serve.md)
    for command, output, service in outputs:
        if command.startswith("curl"):
            reply = json.loads(output)
            assert "error" not in reply, (command, reply)
            (tagged if service == 1 else replies).setdefault(
                re.search(r"/(predict|learn|suggest)", command).group(1), []).append(reply)
    if tagged:  # the correction gave the ticket both tags, and the word it never saw now has them
        assert [r["changed"] for r in tagged["learn"]] == [True] and tagged["predict"][-1]["model_version"] == 1
        before, after = (r["predictions"] for r in tagged["predict"])
        assert before[0]["label"] != ["billing", "mobile"] == after[0]["label"] == after[1]["label"]
    # the correction was learned, and the word the model never saw now names its class
    assert replies["learn"] == [{**replies["learn"][0], "changed": True, "unseen_tokens": None, "warning": None}]
    plain = [r for r in replies["predict"] if all(set(p) == PLAIN_FIELDS for p in r["predictions"])]
    last = plain[-1]
    assert last["model_version"] == 1 and last["predictions"][0]["label"] == "sci.med"
    assert last["predictions"][0]["probabilities"]["sci.med"] > 0.99
    for reply in replies["predict"]:
        check_answers(reply)
    for reply in replies.get("suggest", []):
        scores = [s["score"] for s in reply["suggestions"]]
        assert reply["strategy"] == "mistake" and scores == sorted(scores, reverse=True) and scores, reply
    if len(plain) > 1:  # docs/serve.md asks before the correction too
        before = plain[0]["predictions"][0]
        assert before["decision"] == 0.0 and before["probabilities"] == {"sci.electronics": 0.5, "sci.med": 0.5}
    assert (work / "sci.serve" / "checkpoints.sha256").is_file()  # the state folder beside the model
    # what the document shows is what the service replied, to the precision shown
    shown = shown_replies(document.read_text())
    run_here = [c for c in shell_commands(document.read_text())
                if not c.startswith("pip install") and not re.match(r"^textcw serve \S+\.textcw-model", c)]
    replies_of = dict(zip(run_here, (output for _, output, _ in outputs)))
    shown_commands = [command for command, _ in shown]
    assert len(set(shown_commands)) == len(shown_commands), f"{document.name}: a shown reply's command is repeated"
    for command, reply in shown:
        assert differences(reply, json.loads(replies_of[command])) == [], f"{document.name}: `{command}`"
    temperature = re.search(r"temperature \(([0-9.]+)\)", document.read_text())
    if temperature:
        served = re.search(r"temperature \(([0-9.]+)\)", services[0].output())
        assert served and differences(Shown(temperature.group(1)), float(served.group(1))) == [], \
            f"{document.name} shows temperature {temperature.group(1)}: {services[0].output()}"
