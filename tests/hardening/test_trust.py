"""textcw.trust: state is read back only from folders and files that only the user can write."""

import os

import pytest

from textcw.trust import (UntrustedLocationError, check_trusted_dir, check_trusted_file,
                          ensure_private_dir)


def test_a_new_private_folder_is_owner_only_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        folder = ensure_private_dir(tmp_path / "state" / "inner", "state folder")
    finally:
        os.umask(old)
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)


def test_a_folder_others_can_write_is_refused_with_the_fix(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    with pytest.raises(UntrustedLocationError, match=r"state folder .* can be written by others \(mode 0777\); "
                       r"run: chmod go-w"):
        check_trusted_dir(folder, "state folder")


def test_a_group_writable_file_is_refused(tmp_path):
    path = tmp_path / "key"
    path.write_text("k")
    os.chmod(path, 0o660)
    with pytest.raises(UntrustedLocationError, match="can be written by others"):
        check_trusted_file(path, "signing key")


def test_a_link_is_refused_even_to_a_trusted_folder(tmp_path):
    real = ensure_private_dir(tmp_path / "real", "cache folder")
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(UntrustedLocationError, match="is a symbolic link"):
        check_trusted_dir(link, "cache folder")


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(UntrustedLocationError, match="is not a regular file"):
        check_trusted_file(fifo, "token file")


def test_a_folder_inside_a_folder_others_can_write_without_sticky_bit_is_refused(tmp_path):
    outer = tmp_path / "open"
    outer.mkdir()
    os.chmod(outer, 0o777)
    inner = outer / "mine"
    inner.mkdir(mode=0o700)
    with pytest.raises(UntrustedLocationError, match=r"inside .*open, which others can write to"):
        check_trusted_dir(inner, "state folder")
    os.chmod(outer, 0o1777)  # sticky, as /tmp: others cannot rename or remove what is ours
    assert check_trusted_dir(inner, "state folder") == inner


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a folder's owner needs root")
def test_another_users_folder_is_refused_even_for_root(tmp_path):
    folder = tmp_path / "planted"
    folder.mkdir(mode=0o700)
    os.chown(folder, 12345, 12345)
    with pytest.raises(UntrustedLocationError, match=r"is owned by uid 12345, not by you"):
        check_trusted_dir(folder, "service state folder")


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(UntrustedLocationError, match="cache folder .*nowhere does not exist"):
        check_trusted_dir(tmp_path / "nowhere", "cache folder")
