"""Output folders: a failed command leaves none it made behind."""

from __future__ import annotations

import pytest

from experiments.paths import output_folder


def test_a_folder_made_for_a_failed_write_is_taken_back_with_its_parents(tmp_path):
    out = tmp_path / "a" / "b" / "report"
    with pytest.raises(OSError), output_folder(out) as folder:
        (folder / "one.png").write_bytes(b"x")
        raise OSError(28, "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_existed_is_left_with_what_it_held(tmp_path):
    (tmp_path / "kept.txt").write_text("mine")
    with pytest.raises(KeyboardInterrupt), output_folder(tmp_path / "new"):
        raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]
    with pytest.raises(ValueError), output_folder(tmp_path):
        raise ValueError
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]


def test_a_folder_written_in_full_stays(tmp_path):
    with output_folder(tmp_path / "x" / "y") as folder:
        (folder / "gap.csv").write_text("a\n")
    assert (tmp_path / "x" / "y" / "gap.csv").read_text() == "a\n"
