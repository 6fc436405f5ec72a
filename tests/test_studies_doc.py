"""docs/studies.md's measured numbers are its generated results blocks, and they say
what the checked-in results files (docs/results/) make of them."""

from __future__ import annotations

import subprocess
import sys

from simhelp import REPO

SCRIPT = REPO / "scripts" / "studies_doc.py"
DOC = REPO / "docs" / "studies.md"


def check(doc) -> subprocess.CompletedProcess:
    # The installed dcnsim (CI's wheel), never the source tree, which has no extension.
    return subprocess.run(
        [sys.executable, str(SCRIPT), "render", "--check", "--doc", str(doc)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_the_document_says_what_the_results_files_say():
    proc = check(DOC)
    assert proc.returncode == 0, proc.stderr


def test_a_changed_number_is_caught(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    # dcnsim's number in the generated claims table's first row (after the seed's 25)
    row = "| 1500 B packets: the most workers without incast collapse | 25 | "
    start = text.index(row) + len(row)
    at = next(i for i in range(start, len(text)) if text[i].isdigit())
    changed = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]
    (tmp_path / "studies.md").write_text(changed, encoding="utf-8")
    proc = check(tmp_path / "studies.md")
    assert proc.returncode == 1 and "disagrees" in proc.stderr


def test_every_study_has_its_block(tmp_path):
    text = DOC.read_text(encoding="utf-8").replace("<!-- results: pfabric -->", "")
    (tmp_path / "studies.md").write_text(text, encoding="utf-8")
    proc = check(tmp_path / "studies.md")
    assert proc.returncode == 1 and "pfabric" in proc.stderr
