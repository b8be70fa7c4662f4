"""The dataset artifact is unpacked within its size, whatever its zip entry says."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from ragaliq.errors import ArtifactError
from ragaliq.github.artifacts import unpack_dataset

LIMIT = 64 * 1024


def archive(tmp_path: Path, data: bytes, name: str = "rag_outputs.jsonl") -> Path:
    path = tmp_path / "artifact.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(name, data)
    return path


def unpack(path: Path, into: Path):
    return unpack_dataset(
        path, file_name="", artifact="ragaliq-dataset", run_id=7, into=into, limit=LIMIT
    )


def test_a_dataset_within_the_limit_is_unpacked_with_its_digest(tmp_path):
    into = tmp_path / "out"
    into.mkdir()
    found = unpack(archive(tmp_path, b'{"id": "a"}\n'), into)
    assert found.path.read_bytes() == b'{"id": "a"}\n'
    assert found.size == 12 and len(found.sha256) == 64


def test_a_compressed_bomb_that_says_its_size_is_refused_before_unpacking(tmp_path):
    into = tmp_path / "out"
    into.mkdir()
    with pytest.raises(ArtifactError, match="over the size limit"):
        unpack(archive(tmp_path, b"\0" * (LIMIT + 1)), into)
    assert list(into.iterdir()) == []


def test_an_entry_that_says_less_than_it_holds_is_refused_and_nothing_is_left(tmp_path):
    into = tmp_path / "out"
    into.mkdir()
    path = archive(tmp_path, b"x" * (4 * LIMIT))
    raw = bytearray(path.read_bytes())
    # Both the local header and the central directory say the file is 100 bytes long.
    local = raw.find(b"PK\x03\x04")
    central = raw.find(b"PK\x01\x02")
    raw[local + 22 : local + 26] = struct.pack("<I", 100)
    raw[central + 24 : central + 28] = struct.pack("<I", 100)
    path.write_bytes(bytes(raw))
    with pytest.raises(ArtifactError):
        unpack(path, into)
    assert list(into.iterdir()) == []
