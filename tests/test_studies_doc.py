"""docs/studies.md's measured numbers are its generated results blocks, and they say
what the checked-in results files (docs/results/) make of them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from dcnsim.studies import STUDIES
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


@pytest.fixture(scope="module")
def studies_doc():
    """scripts/studies_doc.py as a module (it imports the installed dcnsim)."""
    spec = importlib.util.spec_from_file_location("studies_doc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", list(STUDIES))
def test_each_study_block_is_its_results_files(studies_doc, name):
    """Every study, the three added after the generator included, has one block, which
    is what its checked-in results files make (its runs, variant and claims)."""
    text = DOC.read_text(encoding="utf-8")
    blocks = {m.group(2): m.group(3) for m in studies_doc.BLOCK.finditer(text)}
    assert name in blocks, f"docs/studies.md has no results block for {name}"
    assert (studies_doc.RESULTS / f"{name}.csv").exists()
    assert blocks[name] == studies_doc.block(name), f"{name}: rerun make studies-doc"
