"""The installed ``textcw-serve`` plugin (profile ``serve``): the service starts from a plain install
of the wheel and the plugin's folder, answers, learns, and stops on SIGTERM. In every other
profile, ``textcw serve`` is not there and ``textcw.client`` says what to install."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import pytest

from test_installed_cli import BIN, TEXTCW, textcw

PLUGINS = set(filter(None, os.environ.get("TEXTCW_INSTALLED_PLUGINS", "textcw-serve").split(",")))
SERVED = "textcw-serve" in PLUGINS
START_SECONDS = 60


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)


@pytest.mark.every_profile
@pytest.mark.corpus
@pytest.mark.skipif(not SERVED, reason="the serve profile installs textcw-serve")
def test_the_installed_service_answers_learns_and_stops(tmp_path, data_home):
    model = tmp_path / "sci.textcw-model"
    # the learner of the serve page (docs/serve.md), whose kernels the earlier profiles have compiled
    # (the profiles share them: dev.py)
    run = textcw("train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev", "--epochs", "1", "--out", model)
    assert run.returncode == 0, run.stderr
    log = tmp_path / "serve.log"
    env = {**os.environ, "TEXTCW_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen([TEXTCW, "serve", str(model), "--learn", "--port", "0"], stdout=out,
                                stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not (match := re.search(r"on (http://127\.0\.0\.1:\d+)/", log.read_text(errors="replace"))):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        url = match.group(1)
        with urllib.request.urlopen(f"{url}/health", timeout=30) as reply:
            assert reply.status == 200
        doc = "the patient's doctor prescribed a new medicine for the disease"
        predicted = post(f"{url}/predict", {"documents": [doc]})["predictions"][0]
        assert predicted["label"] == "sci.med"
        learned = post(f"{url}/learn", {"documents": [doc], "labels": ["sci.med"]})
        assert learned["documents"] == 1
        path = tmp_path / "doc.txt"
        path.write_text(doc)
        run = textcw("predict", "--url", url, path)
        assert run.returncode == 0 and run.stdout == f"{path}\tsci.med\n", run.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    assert code in (0, 143), log.read_text(errors="replace")


@pytest.mark.every_profile
@pytest.mark.skipif(SERVED, reason="this profile installs textcw-serve")
def test_without_the_plugin_serve_is_not_a_command_and_the_client_says_what_to_install(tmp_path):
    run = textcw("serve", "model")
    assert run.returncode == 2 and "serve" in run.stderr
    python = str(BIN / "python")
    # from an empty folder: `python -c` puts the working folder first on sys.path, and the
    # checkout's own textcw must not stand in for the installed one
    run = subprocess.run([python, "-c", "import textcw.client as c; c.Client"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode == 1 and "pip install ./plugins/textcw-serve" in run.stderr
    assert "Traceback" in run.stderr  # a library error, raised as PluginError: the message is its last line
    assert run.stderr.strip().splitlines()[-1].startswith("textcw.errors.PluginError")
