"""textcw.trust judges the real path: links on the way, the folders their targets pass through,
and the file it opened (never a second open of the same path)."""

import os
import threading

import pytest

import textcw
from textcw.errors import ModelFileError
from textcw.trust import (MAX_LINKS, UntrustedLocationError, check_trusted_dir, check_trusted_file,
                          open_regular_file, open_trusted_file)
from textcw.pipeline import make_pipeline

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a link or a file to another user needs root")
OTHER = 12345


def _team_folder(tmp_path):
    """A sticky folder a whole group can write to, as a team's shared folder."""
    team = tmp_path / "team"
    team.mkdir()
    os.chmod(team, 0o1777)
    return team


def _private_file(folder, name="key", text="secret"):
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / name
    path.write_text(text)
    os.chmod(path, 0o600)
    return path


@needs_root
def test_a_link_of_another_user_on_the_way_is_refused(tmp_path):
    real = tmp_path / "mine"
    _private_file(real)
    link = _team_folder(tmp_path) / "models"
    link.symlink_to(real)
    os.lchown(link, OTHER, OTHER)  # its owner can repoint it at any time
    with pytest.raises(UntrustedLocationError, match=r"reached through the symbolic link .*team/models, which "
                       r"is owned by uid 12345: they can point it anywhere"):
        check_trusted_file(link / "key", "signing key")
    (real / "cache").mkdir(mode=0o700)
    with pytest.raises(UntrustedLocationError, match="reached through the symbolic link"):
        check_trusted_dir(link / "cache", "cache folder")  # `cache clear` would delete through it


def test_a_link_of_ones_own_on_the_way_is_followed_and_its_target_judged(tmp_path):
    real = tmp_path / "mine"
    key = _private_file(real)
    link = tmp_path / "via"
    link.symlink_to(real)
    assert check_trusted_file(link / "key", "signing key") == link / "key"
    with open_trusted_file(link / "key", "signing key") as fh:
        assert fh.read() == b"secret"
    # the target's folders are judged too: a target inside a folder anybody can write is refused
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o777)
    _private_file(open_folder / "inner")
    link2 = tmp_path / "via2"
    link2.symlink_to(open_folder / "inner")
    with pytest.raises(UntrustedLocationError, match=r"inside .*/open, which others can write to"):
        check_trusted_file(link2 / "key", "signing key")
    assert key.read_text() == "secret"


def test_relative_links_and_dot_dot_are_walked_as_the_kernel_walks_them(tmp_path):
    real = tmp_path / "a" / "b"
    real.mkdir(parents=True, mode=0o700)
    key = _private_file(real)
    (tmp_path / "a" / "up").symlink_to("b/../b")
    with open_trusted_file(tmp_path / "a" / "up" / "key", "signing key") as fh:
        assert fh.read() == b"secret"
    assert check_trusted_dir(tmp_path / "a" / "b" / ".." / "b", "cache folder")
    assert key.exists()


def test_a_loop_of_links_is_refused_not_followed_forever(tmp_path):
    (tmp_path / "x").symlink_to("y")
    (tmp_path / "y").symlink_to("x")
    with pytest.raises(UntrustedLocationError, match=f"more than {MAX_LINKS} symbolic links"):
        check_trusted_file(tmp_path / "x" / "key", "signing key")


def test_the_file_read_is_the_file_that_was_judged(tmp_path):
    key = _private_file(tmp_path / "state", text="judged")
    fh = open_trusted_file(key, "checkpoint")
    swapped = key.with_name("swap")
    swapped.write_text("planted")
    os.replace(swapped, key)  # a swap after the check changes nothing that is read
    with fh:
        assert fh.read() == b"judged"


def test_a_fifo_behind_a_link_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    (tmp_path / "model").symlink_to(fifo)
    result = []
    worker = threading.Thread(target=lambda: result.append(_refusal(tmp_path / "model")), daemon=True)
    worker.start()
    worker.join(60)  # a hang guard: the refusal takes microseconds
    assert not worker.is_alive(), "opening a FIFO blocked"
    assert "is not a regular file" in result[0]


def _refusal(path):
    try:
        open_regular_file(path, "model file")
    except UntrustedLocationError as exc:
        return str(exc)
    return "opened"


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    model = make_pipeline("precomputed", "pa").fit(X, y)
    return textcw.save(model, tmp_path_factory.mktemp("models") / "m.textcw-model")


def test_a_model_file_others_can_write_is_not_unpickled(saved_model, tmp_path):
    path = tmp_path / "shared.textcw-model"
    path.write_bytes(saved_model.read_bytes())
    os.chmod(path, 0o666)
    with pytest.raises(ModelFileError, match=r"can be written by others \(mode 0666\); run: chmod go-w .*textcw "
                       "unpickles a model file only when nobody else can have written it"):
        textcw.load(path)
    assert textcw.read_manifest(path)["format"] == "textcw-model"  # reading JSON is harmless
    os.chmod(path, 0o644)
    textcw.load(path)


@needs_root
def test_a_model_file_of_another_user_loads_only_when_signed_with_the_users_key(saved_model, tmp_path,
                                                                                 monkeypatch):
    path = tmp_path / "theirs.textcw-model"
    path.write_bytes(saved_model.read_bytes())
    os.chown(path, OTHER, OTHER)
    with pytest.raises(ModelFileError, match=r"is owned by uid 12345, not by you"):
        textcw.load(path)
    model = textcw.load(saved_model)
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "k" * 32)
    with pytest.raises(ModelFileError, match="not signed"):
        textcw.load(path)  # with a key, every file must be signed with it, wherever it lies
    signed = textcw.save(model, tmp_path / "signed.textcw-model")
    os.chown(signed, OTHER, OTHER)
    os.chmod(signed, 0o666)
    assert textcw.load(signed) is not None  # the user's own key vouches for it


def test_a_model_that_is_a_link_of_ones_own_loads(saved_model, tmp_path):
    link = tmp_path / "current.textcw-model"
    link.symlink_to(saved_model)
    assert textcw.load(link) is not None
