"""``textcw serve`` as a command: added through the plugin hook, refusing unsafe or bad options."""

from __future__ import annotations

import os

import pytest
from textcw.cli import main
from textcw.testing import check_plugin

import textcw_serve.plugin
from serve_fixtures import save_model, serve_process  # noqa: F401 (fixture)
from textcw_serve.server import is_loopback, read_token


def run(capsys, *argv) -> tuple[int, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out + err


def test_the_plugin_adds_the_serve_command_through_its_entry_point():
    check_plugin(textcw_serve.plugin, distribution="textcw-serve", check_components=False)


def test_serve_is_listed_in_the_help(capsys):
    code, out = run(capsys, "--help")
    assert code == 0 and "serve" in out


def test_listening_beyond_loopback_needs_a_token(capsys, tmp_path):
    model = save_model(tmp_path)
    code, out = run(capsys, "serve", model, "--host", "0.0.0.0", "--port", "0")
    assert code == 2
    assert "error: refusing to listen on 0.0.0.0 without a token" in out and "--token-file" in out
    assert not (tmp_path / "model.serve").exists()  # refused before anything was opened


@pytest.mark.parametrize(("content", "message"), [
    (b"short\n", "at least 16 printable ASCII characters"),
    (b"has a space in the middle 123\n", "at least 16 printable ASCII characters"),
    (b"x" * 5000, "is over 4096 bytes"),
])
def test_bad_token_files_are_refused(capsys, tmp_path, content, message):
    model = save_model(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_bytes(content)
    code, out = run(capsys, "serve", model, "--token-file", token_file, "--port", "0")
    assert code == 1 and message in out


def test_a_token_file_is_read_without_its_line_break(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_bytes(b"0123456789abcdef-XYZ\n")
    os.chmod(token_file, 0o600)
    assert read_token(token_file) == "0123456789abcdef-XYZ"


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.8.9.1", True), ("::1", True),
                                                 ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                                 ("::", False), ("192.168.1.4", False), ("example.org", False)])
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def test_bad_options_and_models_get_one_line_errors(capsys, tmp_path):
    model = save_model(tmp_path)
    code, out = run(capsys, "serve", model, "--port", "70000")
    assert code == 2 and "--port 70000 is not a port number" in out
    code, out = run(capsys, "serve", tmp_path / "missing.textcw-model", "--port", "0")
    assert code == 1 and "does not exist" in out
    code, out = run(capsys, "serve", model, "--checkpoint-every", "-1")
    assert code == 2 and "--checkpoint-every -1 must be 0 or more" in out
    code, out = run(capsys, "serve", model, "--full-every", "0")
    assert code == 2 and "--full-every 0 must be 1 or more" in out
    (tmp_path / "file").write_text("x")
    code, out = run(capsys, "serve", model, "--learn", "--state", tmp_path / "file", "--port", "0")
    assert code == 1 and "is not a folder" in out


def test_a_served_process_answers_and_stops_cleanly_on_sigterm(tmp_path, serve_process):
    model = save_model(tmp_path)
    server = serve_process([str(model), "--learn"], "serve.log")
    client = server.client()
    assert client.health() == {"status": "ok", "learning": True}
    assert client.learn(["orbit rocket"], ["space"])["seq"] == 1
    assert server.terminate() == 143  # the conventional status of SIGTERM, after a clean stop
    assert "interrupted" in server.output() and "Traceback" not in server.output()
    assert sorted(p.name for p in (tmp_path / "model.serve").glob("[cd]*-0*")) == [
        "checkpoint-000000000000.textcw-model", "delta-000000000001.npz"]  # the final checkpoint: a delta
