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


def fake_study(value_of_fixed: float = 7.0):
    """A study of one seeded point and one run that is the same whatever the seed (as
    BOTCP's Figs. 8-10), with nothing to simulate."""
    import pandas as pd

    from dcnsim.studies.study import Study

    def runs(quick=False, jobs=None, progress=None, seeds=(1, 2, 3)):
        rows = [{"kind": "point", "seed": s, "value": s / 10, "wall_s": 0.1} for s in seeds]
        return pd.DataFrame([*rows, {"kind": "fixed", "seed": 1, "value": value_of_fixed,
                                     "wall_s": 0.2}])  # fmt: skip

    def tables(runs, verbose):
        return runs, f"values {sorted(runs['value'])}"

    return Study("fake", "a fake study", "no seed", runs, tables, lambda runs: [], {})


def test_add_seeds_appends_the_missing_seeds_only(studies_doc, tmp_path, monkeypatch):
    import json

    import pandas as pd

    monkeypatch.setattr(studies_doc, "RESULTS", tmp_path)
    monkeypatch.setattr(studies_doc, "STUDIES", {"fake": fake_study()})
    studies_doc.run(["fake"], quick=False, jobs=1, seeds=1)
    assert sorted(pd.read_csv(tmp_path / "fake.csv")["seed"]) == [1, 1]
    studies_doc.add_seeds(["fake"], quick=False, jobs=1, seeds=3)
    runs = pd.read_csv(tmp_path / "fake.csv")
    # seeds 2 and 3 of the point; the fixed run, repeated identical, is kept once
    assert sorted(zip(runs["kind"], runs["seed"], strict=True)) == [
        ("fixed", 1), ("point", 1), ("point", 2), ("point", 3)]  # fmt: skip
    meta = json.loads((tmp_path / "fake.json").read_text())
    assert meta["runs"] == 4 and meta["seeds_option"] == 1  # the first run's option
    assert [a["seeds"] for a in meta["seeds_added"]] == [[2, 3]]
    head = studies_doc.block("fake").splitlines()[0]
    assert (
        "**full** variant, seeds 1..3 (run first with `--seeds 1` in place of the variant's own)"
        in head
    )
    assert "seeds 2, 3 added to the earlier runs by `--add-seeds`" in head
    # Nothing is missing: nothing runs but the fixed run, and nothing changes.
    studies_doc.add_seeds(["fake"], quick=False, jobs=1, seeds=3)
    assert len(pd.read_csv(tmp_path / "fake.csv")) == 4


def test_add_seeds_refuses_a_repeated_run_that_differs(studies_doc, tmp_path, monkeypatch):
    monkeypatch.setattr(studies_doc, "RESULTS", tmp_path)
    monkeypatch.setattr(studies_doc, "STUDIES", {"fake": fake_study()})
    studies_doc.run(["fake"], quick=False, jobs=1, seeds=1)
    before = (tmp_path / "fake.csv").read_text()
    monkeypatch.setattr(studies_doc, "STUDIES", {"fake": fake_study(8.0)})
    with pytest.raises(SystemExit, match="differs from the checked-in one"):
        studies_doc.add_seeds(["fake"], quick=False, jobs=1, seeds=2)
    with pytest.raises(SystemExit, match="hold the full variant"):
        studies_doc.add_seeds(["fake"], quick=True, jobs=1, seeds=2)
    assert (tmp_path / "fake.csv").read_text() == before


def parted_study(b_value: float):
    """A study of two parts that run alone (``experiments``): ``a`` and ``b``, two
    seeds each, ``b``'s value ``b_value``."""
    import pandas as pd

    from dcnsim.studies.study import Study

    def runs(quick=False, jobs=None, progress=None, seeds=(1, 2), experiments=("a", "b")):
        values = {"a": 1.0, "b": b_value}
        return pd.DataFrame([{"experiment": e, "seed": s, "value": values[e], "wall_s": 0.1}
                             for e in experiments for s in seeds])  # fmt: skip

    def tables(runs, verbose):
        return runs, f"values {sorted(runs['value'])}"

    return Study("parted", "a study in parts", "no seed", runs, tables, lambda runs: [], {},
                 experiments=("a", "b"))  # fmt: skip


def test_experiments_rerun_one_part_in_place(studies_doc, tmp_path, monkeypatch):
    import json

    import pandas as pd

    monkeypatch.setattr(studies_doc, "RESULTS", tmp_path)
    monkeypatch.setattr(studies_doc, "STUDIES", {"parted": parted_study(2.0)})
    studies_doc.run(["parted"], quick=False, jobs=1)
    monkeypatch.setattr(studies_doc, "STUDIES", {"parted": parted_study(3.0)})
    studies_doc.redo("parted", quick=False, jobs=1, experiments=["b"])
    runs = pd.read_csv(tmp_path / "parted.csv")
    assert sorted(zip(runs["experiment"], runs["seed"], runs["value"], strict=True)) == [
        ("a", 1, 1.0), ("a", 2, 1.0), ("b", 1, 3.0), ("b", 2, 3.0)]  # fmt: skip
    meta = json.loads((tmp_path / "parted.json").read_text())
    assert meta["runs"] == 4
    assert [(r["experiments"], r["runs"], r["replaced"]) for r in meta["redone"]] == [(["b"], 2, 2)]
    head = studies_doc.block("parted").splitlines()[0]
    assert "the 2 runs of b rerun alone by `--experiments` in place of 2" in head
    before = (tmp_path / "parted.csv").read_text()
    with pytest.raises(SystemExit, match="cannot run c alone"):
        studies_doc.redo("parted", quick=False, jobs=1, experiments=["c"])
    with pytest.raises(SystemExit, match="hold the full variant"):
        studies_doc.redo("parted", quick=True, jobs=1, experiments=["b"])
    assert (tmp_path / "parted.csv").read_text() == before
