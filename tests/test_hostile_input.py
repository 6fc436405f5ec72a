"""Files that are not small regular files, numbers as people write them, and the
command line a newcomer expects: each a one-line error (exit 2) or a working run."""

from __future__ import annotations

import os
import stat

import pytest

import dcnsim
from dcnsim import ScenarioError
from simhelp import EXAMPLES, assert_one_error_line, cli

TREE3 = str(EXAMPLES / "tree3_probes.toml")


def hostile_paths(tmp_path) -> dict[str, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"directory": str(tmp_path), "device": "/dev/zero", "fifo": str(fifo)}


@pytest.mark.parametrize("kind", ["directory", "device", "fifo"])
def test_a_scenario_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = hostile_paths(tmp_path)[kind]
    message = assert_one_error_line(cli("validate", path, timeout=10))
    reason = "it is a directory" if kind == "directory" else "it is not a regular file"
    assert message == f"scenario: cannot read '{path}': {reason}"


def test_a_too_large_scenario_file_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(dcnsim.scenario.MAX_SCENARIO_FILE_BYTES + 1)  # sparse: nothing to read
    message = assert_one_error_line(cli("validate", str(big), timeout=10))
    assert message.endswith(f"more than the {dcnsim.scenario.MAX_SCENARIO_FILE_BYTES} allowed")


@pytest.mark.parametrize("kind", ["directory", "device", "fifo"])
def test_a_cdf_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = hostile_paths(tmp_path)[kind]
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[topology]\nkind = "star"\nhosts = 2\n'
        f'[[traffic.workloads]]\nsrc = 0\ndst = 1\ncdf = "{path}"\nload = 0.5\nstop = "1ms"\n'
    )
    message = assert_one_error_line(cli("validate", str(scenario), timeout=10))
    assert message.startswith("traffic.workloads[0].cdf: ")
    reason = "it is a directory" if kind == "directory" else "it is not a regular file"
    assert message.endswith(reason), message


def probe_at(time: str) -> dict:
    return {
        "topology": {"kind": "star", "hosts": 2, "link": {"rate": "2.5e9bps", "delay": "1 us"}},
        "traffic": {"probes": [{"src": 0, "dst": 1, "size": "1.5e3B", "time": time}]},
    }


def test_exponents_and_spaces_in_quantities_are_read_exactly():
    results = dcnsim.run(probe_at("2e-1us"))
    (latency,) = results.probes["latency_s"]
    # Two hops of 1500 B at 2.5 Gbps (4.8 us each) and 1 us of propagation each.
    assert latency == pytest.approx(2 * (4.8e-6 + 1e-6), abs=1e-15)
    assert results.probes["sent_s"][0] == pytest.approx(0.2e-6, abs=1e-15)


def test_a_quantity_beyond_the_clock_says_too_large():
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate(probe_at("1e9s"))
    assert str(err.value).startswith("traffic.probes[0].time: ")
    assert "too large" in str(err.value)


def test_run_without_out_prints_the_summary_and_writes_nothing(tmp_path):
    proc = cli("run", TREE3, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "packets" in proc.stdout and "wrote" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_outputs_honour_the_umask(tmp_path):
    out = tmp_path / "out"
    assert cli("run", TREE3, "--out", str(out), "--no-progress").returncode == 0
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((out / "summary.json").stat().st_mode) == 0o666 & ~mask


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"topology": {"kind": "star", "hosts": 2}, "seed": 2**70},
         "seed: 1180591620717411303424 is too large for a 64-bit integer"),
        ({"topology": {"kind": "star", "hosts": 2}, "name": "a\ud800b"},
         "name: not valid Unicode text (a lone surrogate)"),
        ({"topology": {"kind": "star", "hosts": 2, "\udc80": 1}},
         "topology: not valid Unicode text (a lone surrogate)"),
    ],
)  # fmt: skip
def test_python_values_the_core_cannot_take_are_scenario_errors(data, message):
    for call in (dcnsim.validate, dcnsim.run):
        with pytest.raises(ScenarioError) as err:
            call(data)
        assert str(err.value) == message


def test_deep_nesting_is_a_scenario_error_not_a_recursion_error():
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(ScenarioError) as err:
        dcnsim.validate({"topology": {"kind": "star", "hosts": 2}, "trace": deep})
    assert str(err.value).startswith("trace" + ".x" * 63 + ": nested more than 64 levels deep")


def test_a_duplicate_key_is_named():
    text = '[topology]\nkind = "star"\nhosts = 2\n[transport]\nmss = "1460B"\nmss = "536B"\n'
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml_str(text)
    assert str(err.value) == "scenario: invalid TOML in scenario text: duplicate key mss (line 6)"


def test_a_run_that_cannot_fit_is_refused_up_front_with_its_estimate():
    # A recorded stream of 64 B packets at 10 Gbps for 1000 s: 1000 s x 10 Gbps / 512 bit
    # = 1.95e10 packets, at 160 B a recorded row = 3.1 TB.
    huge = {"topology": {"kind": "star", "hosts": 2},
            "traffic": {"streams": [{"src": 0, "dst": 1, "rate": "10Gbps", "size": "64B",
                                     "stop": "1000s", "record": True}]}}  # fmt: skip
    with pytest.raises(ScenarioError) as err:
        dcnsim.run(huge, memory_limit=8 * 10**9)
    assert str(err.value).startswith(
        "scenario: a run needs about 3.1 TB (recorded packets 3.1 TB), more than the 8.0 GB "
        "allowed (memory_limit / --memory-limit)"
    )
    # Without a limit the default is a share of the memory available.
    with pytest.raises(ScenarioError) as err:
        dcnsim.run(huge)
    assert "available; memory_limit / --memory-limit to change)" in str(err.value)
    proc = cli("run", TREE3, "--memory-limit", "1KB")
    assert assert_one_error_line(proc).startswith("scenario: a run needs about ")
    assert "more than the 1.0 KB allowed (memory_limit / --memory-limit)" in proc.stderr
    assert assert_one_error_line(cli("run", TREE3, "--memory-limit", "lots")).startswith(
        "--memory-limit: "
    )
