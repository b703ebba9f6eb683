"""Files are read and written back faithfully and atomically."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from torchlint.source.sourcefile import ChangedOnDisk, SourceError, read_source, write_source


def test_utf8_bom_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"\xef\xbb\xbfx = 'h\xc3\xa9'\r\n")
    source = read_source(path)
    assert source.bom and source.text == "x = 'hé'\r\n"
    write_source(source, source.text.replace("x", "y"))
    assert path.read_bytes() == b"\xef\xbb\xbfy = 'h\xc3\xa9'\r\n"


def test_latin1_with_coding_cookie(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    source = read_source(path)
    assert source.encoding in ("iso-8859-1", "latin-1")
    assert "é" in source.text
    write_source(source, source.text + "z = 1\n")
    assert path.read_bytes() == b"# -*- coding: latin-1 -*-\nname = '\xe9'\nz = 1\n"


def test_invalid_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    with pytest.raises(SourceError, match="not valid utf-8"):
        read_source(path)


def test_huge_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n" * 100)
    with pytest.raises(SourceError, match="limit"):
        read_source(path, max_bytes=100)


def test_write_keeps_permissions(tmp_path: Path) -> None:
    path = tmp_path / "run.py"
    path.write_text("x = 1\n")
    os.chmod(path, 0o751)
    write_source(read_source(path), "x = 2\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == "x = 2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.py"]


def test_file_changed_on_disk_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    source = read_source(path)
    path.write_text("x = 'edited by the user'\n")
    with pytest.raises(ChangedOnDisk):
        write_source(source, "x = 2\n")
    assert path.read_text() == "x = 'edited by the user'\n"


def test_fifo_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "pipe.py"
    os.mkfifo(path)
    with pytest.raises(SourceError, match="not a regular file"):
        read_source(path)
