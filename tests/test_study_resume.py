"""A study stopped by Ctrl-C or SIGTERM keeps its finished runs beside its ``--out``
and the same command resumes from them (issue 48: "a sweep or study resumes after
it"; ``dcnsim.studies.kept``).

The study here is a plugged one (as ``test_plugged_study.py`` adds it): eight bulk
flows across a 10 Gbps star, each run a few hundred milliseconds of wall time.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from dcnsim import cli, studies
from dcnsim.exits import Terminated
from dcnsim.studies import kept, runner

SIZES_MB = [500, 510, 520, 530, 540, 550, 560, 570]

BULK = textwrap.dedent(
    f'''
    """Eight bulk flows across a star, one per run."""

    import pandas as pd

    from dcnsim.scenario import Scenario
    from dcnsim.studies.runner import run_scenarios
    from dcnsim.studies.study import Study
    from dcnsim.studies.text import Claim

    SIZES_MB = {SIZES_MB!r}


    def scenario(mb):
        return Scenario({{
            "name": f"bulk-{{mb}}",
            "stop_time": "1s",
            "topology": {{"kind": "star", "hosts": 2,
                         "link": {{"rate": "10Gbps", "delay": "1us"}}}},
            "traffic": {{"flows": [{{"src": 0, "dst": 1, "size": f"{{mb}}MB"}}]}},
        }})


    def fct(results):
        return {{"fct_s": float(results.flows["fct_s"].iloc[0])}}


    def runs(quick=False, jobs=None, progress=None):
        rows = run_scenarios([(fct, scenario(mb)) for mb in SIZES_MB], jobs, progress)
        return pd.DataFrame([{{"mb": mb, **row}} for mb, row in zip(SIZES_MB, rows)])


    def tables(detail, verbose):
        table = detail[["mb", "fct_s"]]
        return table, table.to_string(index=False)


    def claims(detail):
        # A flow cannot beat its bytes over the link's rate.
        ok = bool((detail["fct_s"] >= detail["mb"] * 8e6 / 10e9).all())
        return [Claim("no flow beats size / rate", "all", str(ok), ok)]


    STUDY = Study(name="bulk", title="Bulk flows", seed="none", runs=runs,
                  tables=tables, claims=claims, figures={{}}, seeded=False)
    '''
)

#: Runs the command line with the bulk study registered, as a user's process would.
ENTRY = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    import bulk_study
    from dcnsim import studies
    sys.modules["dcnsim.studies.bulk_study"] = bulk_study
    studies.MODULES["bulk"] = "bulk_study"
    from dcnsim import __main__ as entry
    sys.argv = ["dcnsim", *sys.argv[2:]]
    sys.exit(entry.main())
    """
)


@pytest.fixture(scope="module")
def bulk(tmp_path_factory):
    """The bulk study, registered as ``test_plugged_study.py`` registers its own, once
    for the module (the studies' mapping keeps the module it loaded)."""
    where = tmp_path_factory.mktemp("bulk")
    (where / "bulk_study.py").write_text(BULK, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(where))
        module = importlib.import_module("bulk_study")
        patch.setitem(sys.modules, "dcnsim.studies.bulk_study", module)
        patch.setitem(studies.MODULES, "bulk", "bulk_study")
        yield module.STUDY
    sys.modules.pop("bulk_study")


def _without_wall(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns="wall_s").reset_index(drop=True)


def test_a_study_stopped_after_three_runs_resumes_with_the_other_five(
    bulk, tmp_path, monkeypatch, capsys
):
    whole = studies.run_study(bulk, jobs=1).detail
    out = tmp_path / "out"
    out.mkdir()
    (out / "study.csv").write_text("an earlier study's table\n")
    ran = []

    def stopping_at_the_fourth(reduce, scenario):
        if len(ran) == 3:
            raise Terminated  # SIGTERM arriving while the fourth run runs
        ran.append(scenario)
        return real(reduce, scenario)

    real = runner._run_one
    monkeypatch.setattr(runner, "_run_one", stopping_at_the_fourth)
    command = ["study", "bulk", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert cli.main(command) == 143
    keeps = tmp_path / ".out.runs"
    assert capsys.readouterr().err.splitlines() == [
        f"error: terminated: 3 finished runs of the study are kept in {keeps}; "
        "run the same study again to resume"
    ]
    assert len(list(keeps.glob("*.pickle"))) == 3
    assert [p.name for p in out.iterdir()] == ["study.csv"]  # the old output as it was
    assert (out / "study.csv").read_text() == "an earlier study's table\n"

    ran.clear()
    monkeypatch.setattr(runner, "_run_one", lambda r, s: ran.append(s) or real(r, s))
    assert cli.main(command) == 0
    printed = capsys.readouterr().out
    assert "8 runs in" in printed and "; 3 of them kept by an interrupted study" in printed
    assert [s.to_dict()["name"] for s in ran] == [f"bulk-{mb}" for mb in SIZES_MB[3:]]
    assert not keeps.exists()
    pd.testing.assert_frame_equal(
        _without_wall(pd.read_csv(out / "runs.csv")), _without_wall(whole)
    )


def test_the_printout_says_how_many_runs_were_kept(bulk, tmp_path, capsys):
    out = tmp_path / "out"
    with kept.kept_runs(kept.beside(out)):
        runner.run_scenarios([(bulk_fct(), bulk_scenario(SIZES_MB[0]))], jobs=1)
    assert cli.main(["study", "bulk", "--jobs", "1", "--no-progress", "--out", str(out)]) == 0
    assert "8 runs in" in (printed := capsys.readouterr().out)
    assert "; 1 of them kept by an interrupted study" in printed


def test_rows_of_another_build_are_not_taken(bulk, tmp_path, monkeypatch):
    task = (bulk_fct(), bulk_scenario(SIZES_MB[0]))
    with kept.kept_runs(tmp_path / "keeps") as store:
        first = runner.run_scenarios([task], jobs=1)
        assert (store.reused, store.count()) == (0, 1)
        again = runner.run_scenarios([task], jobs=1)
        assert store.reused == 1 and again == first  # the same row, wall_s included
        monkeypatch.setattr(kept, "_build", lambda: "another build")
        runner.run_scenarios([task], jobs=1)
        assert (store.reused, store.count()) == (1, 2)  # run again, kept beside


def test_a_reduce_with_bound_values_is_told_apart_by_them(bulk, tmp_path):
    # The pFabric study's reductions are functools.partial objects: the values they
    # bind are part of the key (here the same scenario reduced two ways).
    scenario = bulk_scenario(SIZES_MB[0])
    tasks = [(functools.partial(_scaled, factor=f), scenario) for f in (1.0, 2.0)]
    with kept.kept_runs(tmp_path / "keeps") as store:
        rows = runner.run_scenarios(tasks, jobs=1)
        assert store.count() == 2 and rows[1]["fct_s"] == 2 * rows[0]["fct_s"]
        assert runner.run_scenarios(tasks, jobs=1) == rows and store.reused == 2


def _scaled(results, factor):
    return {"fct_s": factor * float(results.flows["fct_s"].iloc[0])}


def test_a_row_being_written_when_killed_is_not_a_row(tmp_path):
    keeps = tmp_path / "keeps"
    keeps.mkdir()
    (keeps / f".{'0' * 64}.pickle.123.tmp").write_bytes(b"\x80\x05half a pickle")
    with kept.kept_runs(keeps) as store:
        assert store.count() == 0 and not list(keeps.iterdir())


def test_sigterm_to_a_study_on_two_workers_keeps_its_runs_and_it_resumes(tmp_path):
    (tmp_path / "bulk_study.py").write_text(BULK, encoding="utf-8")
    out = tmp_path / "out"
    keeps = tmp_path / ".out.runs"
    command = [sys.executable, "-c", ENTRY, str(tmp_path), "study", "bulk", "--jobs", "2",
               "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while len(list(keeps.glob("*.pickle"))) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    n = len(list(keeps.glob("*.pickle")))
    assert 2 <= n < len(SIZES_MB), stdout
    assert (proc.returncode, stderr.splitlines()) == (
        143,
        [f"error: terminated: {n} finished runs of the study are kept in {keeps}; "
         "run the same study again to resume"],
    )  # fmt: skip
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):  # no worker outlived the study
        os.killpg(proc.pid, 0)
    assert not out.exists() and not list(keeps.glob(".*"))
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"; {n} of them kept by an interrupted study" in again.stdout
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__")
    assert left == ["bulk_study.py", "out"]
    assert len(pd.read_csv(out / "runs.csv")) == len(SIZES_MB)


def bulk_fct():
    return sys.modules["bulk_study"].fct


def bulk_scenario(mb):
    return sys.modules["bulk_study"].scenario(mb)
