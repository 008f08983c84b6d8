"""Every command that reads a model file refuses a FIFO (or another non-regular file) before
opening it: opening a FIFO for reading blocks until somebody writes to it."""

import os
import threading

import pytest

from tests.cli_run import one_line_error, run

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "model.textcw-model"
    os.mkfifo(path, 0o600)
    yield path
    # unblock a command that did open it, so that a failing test does not hang the run
    with pytest.raises(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("command", [
    ("inspect", "{model}"),
    ("predict", "{model}", "{text}"),
    ("export", "{model}", "{out}"),
    ("train", "--init-model", "{model}", "--corpus", "csv:{table}"),
])
def test_a_fifo_given_as_a_model_is_refused_at_once(command, fifo, tmp_path, capsys):
    text = tmp_path / "letter.txt"
    text.write_text("my mac's video card\n")
    table = tmp_path / "t.csv"
    table.write_text("text,label\n" + "".join(f"doc {i},{'ab'[i % 2]}\n" for i in range(20)))
    argv = [a.format(model=fifo, text=text, out=tmp_path / "out.textcw-export", table=table) for a in command]
    result = []
    worker = threading.Thread(target=lambda: result.append(run(capsys, *argv)), daemon=True)
    worker.start()
    worker.join(120)  # a hang guard far above the milliseconds a refusal takes
    assert not worker.is_alive(), f"textcw {command[0]} blocked on a FIFO"
    code, _, err = result[0]
    assert code != 0
    assert "is not a regular file" in one_line_error(err)
