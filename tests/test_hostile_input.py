"""Files that are not small regular files, numbers as people write them, and the
command line a newcomer expects: each a one-line error (exit 2) or a working run."""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomli_w

import dcnsim
from dcnsim import ScenarioError, limits
from simhelp import EXAMPLES, assert_one_error_line, cli, interruptible

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
        f.truncate(limits.MAX_FILE_BYTES + 1)  # sparse: nothing to read
    message = assert_one_error_line(cli("validate", str(big), timeout=10))
    assert message.endswith(f"more than the {limits.MAX_FILE_BYTES} allowed")


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


# --- the catalogue: crashes ----------------------------------------------------------------
# Each entry was a traceback, a hang, an exhausted memory or a silent acceptance
# before; each is now one line naming the argument or the bound (exit 2 from the
# command line), or the documented exit 130 for Ctrl-C.

DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_TABLE = "{a=" * 30_000 + "1" + "}" * 30_000  # 120 KB: within one argument's 128 KB
LONG_KEY = ".".join(["a"] * 40_001)
STAR = '[topology]\nkind = "star"\nhosts = 2\n'


def sweep_file(tmp_path, line: str) -> str:
    (tmp_path / "base.toml").write_text(STAR)
    path = tmp_path / "sweep.toml"
    path.write_text(f'base = "base.toml"\n{line}\n[grid]\nstop_time = ["1ms", "2ms"]\n')
    return str(path)


@pytest.mark.parametrize(
    ("value", "bound"),
    [(DEEP_ARRAY, "values nested more than 64 levels deep"),
     (DEEP_TABLE, "values nested more than 64 levels deep"),
     ('"' + "x" * 70_000 + '"', "{field}a string of more than 65536 characters")],
)  # fmt: skip
def test_text_beyond_a_bound_is_refused_before_parsing(tmp_path, value, bound):
    # A string is named by its key (issue 48: a 10 MB string named only its line).
    scenario = tmp_path / "s.toml"
    scenario.write_text(f"name = {value}\n{STAR}")
    assert assert_one_error_line(cli("validate", str(scenario), timeout=30)) == (
        f"scenario: '{scenario}' line 1: {bound.format(field='name: ')}"
    )
    message = assert_one_error_line(cli("validate", TREE3, "--set", f"name={value}", timeout=30))
    # One value: no line, no key of its own.
    assert message.startswith(f"argument --set: name: {bound.format(field='')}")
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario.from_toml_str(f"{STAR}[traffic]\nx = {value}\n")
    assert str(err.value) == (
        f"scenario: scenario text line 5: {bound.format(field='traffic.x: ')}"
    )
    sweep = sweep_file(tmp_path, f"name = {value}")
    message = assert_one_error_line(cli("sweep", sweep, "--out", str(tmp_path / "o"), timeout=30))
    assert message == f"{sweep}: line 2: {bound.format(field='name: ')}"


def test_a_ten_megabyte_string_is_refused_naming_its_field(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(f'{STAR}[[traffic.flows]]\nsrc = 0\ndst = 1\nsize = "{"9" * 10**7}B"\n')
    message = assert_one_error_line(cli("validate", str(scenario), timeout=60))
    assert message == (
        f"scenario: '{scenario}' line 7: traffic.flows.size: a string of more than 65536 characters"
    )


def test_bounds_hold_on_python_data_too():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ScenarioError, match=r"^name(\[0\]){63}: nested more than 64 levels"):
        dcnsim.Scenario({"name": deep})
    with pytest.raises(dcnsim.SweepError, match=r"^grid(\.x){63}: nested more than 64 levels"):
        nested: dict = {}
        node = nested
        for _ in range(5000):
            node["x"] = {}
            node = node["x"]
        dcnsim.Sweep.from_dict({"base": {"topology": {"kind": "star", "hosts": 2}}, "grid": nested})


def test_valid_toml_near_the_bounds_is_read_as_before():
    text = (
        f'{STAR}name = """x.y [[[ {{{{ \'\'\' "" """\n'
        "[trace]\n" + ".".join(["a"] * 64) + " = 1\n"
        "k = [[1.5, 2e3], {x = 1979-05-27T07:32:00.999Z}] # ]]]] {{{\n"
        f"deep = {'[' * 62}{']' * 62}\n"
    )
    import tomllib

    assert limits.loads(text) == tomllib.loads(text)


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: dcnsim.Scenario(5), "Scenario(data): expected a dict of sections, not integer 5"),
     (lambda: dcnsim.Scenario("topology"),
      "Scenario(data): expected a dict of sections, not string 'topology' (to read a scenario "
      "file: Scenario.from_toml)"),
     (lambda: dcnsim.Scenario(STAR_DICT).set(5, 1),
      "key: expected a dotted key (str) such as forwarding.policy, not integer 5"),
     (lambda: dcnsim.Scenario.from_toml(5), "from_toml: expected a file path, not integer 5"),
     (lambda: dcnsim.Scenario.from_toml_str(b"x"),
      "from_toml_str: expected TOML text (str), not bytes b'x'"),
     (lambda: dcnsim.run(5), "scenario: expected a Scenario, a dict or a path, not integer 5"),
     (lambda: dcnsim.run(STAR_DICT, chunk_rows=0),
      "chunk_rows: expected a positive number of rows, got 0"),
     (lambda: dcnsim.run(STAR_DICT, chunk_rows=2**70),
      "chunk_rows: expected at most 2**63 - 1 rows, got 1180591620717411303424"),
     (lambda: dcnsim.run(STAR_DICT, chunk_rows="many"),
      "chunk_rows: expected a whole number of rows, not 'many'"),
     (lambda: dcnsim.run(STAR_DICT, memory_limit="lots"),
      'memory_limit: expected a number followed by a unit, got "lots"'),
     (lambda: dcnsim.run(STAR_DICT, memory_limit=[1]),
      "memory_limit: expected a number of bytes (a positive integer) or a size such as '8GB', "
      "not [1]"),
     (lambda: dcnsim.run(STAR_DICT, out=5), "out: expected a directory path, not 5"),
     (lambda: dcnsim.run(STAR_DICT, out="/proc/x"), "out '/proc/x': No such file or directory"),
     (lambda: dcnsim.validate("a\0b"), "scenario: cannot read 'a\\x00b': embedded null byte")],
)  # fmt: skip
def test_wrong_arguments_of_the_python_api_are_one_line_scenario_errors(call, message):
    with pytest.raises(ScenarioError) as err:
        call()
    assert str(err.value) == message


STAR_DICT = {"topology": {"kind": "star", "hosts": 2}}


def test_an_output_path_that_is_a_file_is_named_as_given(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ScenarioError) as err:
        dcnsim.run(STAR_DICT, out=tmp_path / "file")
    assert str(err.value) == f"out '{tmp_path / 'file'}': exists and is not a directory"
    os.chmod(tmp_path, 0o555)
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root)")
        with pytest.raises(ScenarioError) as err:
            dcnsim.run(STAR_DICT, out=tmp_path / "out")
        assert str(err.value) == f"out '{tmp_path / 'out'}': Permission denied"
    finally:
        os.chmod(tmp_path, 0o755)


# --- the catalogue: memory -----------------------------------------------------------------


def test_a_key_of_40001_parts_is_refused_at_once(tmp_path):
    # Was 110 s and 6.3 GB in the TOML parser (quadratic) before a MemoryError.
    path = tmp_path / "key.toml"
    path.write_text(f"{LONG_KEY} = 1\n")
    started = time.monotonic()
    message = assert_one_error_line(cli("validate", str(path), timeout=60))
    assert message == f"scenario: '{path}' line 1: a dotted key of more than 64 parts"
    message = assert_one_error_line(cli("validate", TREE3, "--set", f"{LONG_KEY}=1", timeout=60))
    assert message == "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a....: a key of more than 64 parts"
    assert time.monotonic() - started < 30  # a few seconds with Python's start-up, loaded


def test_a_device_as_sweep_file_is_refused_unread(tmp_path):
    # /dev/zero was read until memory ran out (a MemoryError after 2.4 GB).
    message = assert_one_error_line(cli("sweep", "/dev/zero", "--out", str(tmp_path), timeout=30))
    assert message == "/dev/zero: cannot read: it is not a regular file"


HUGE = {"topology": {"kind": "star", "hosts": 2},
        "traffic": {"streams": [{"src": 0, "dst": 1, "rate": "10Gbps", "size": "64B",
                                 "stop": "1s", "record": True}]}}  # fmt: skip


def test_a_run_beyond_the_address_space_limit_is_refused_naming_it(tmp_path):
    # 19.5 M recorded packets, about 3.1 GB held; under a 2.5 GB address-space limit
    # this aborted the interpreter (SIGABRT, "memory allocation failed") after 48 s.
    script = (
        "import resource, sys, dcnsim\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2_500_000_000, resource.RLIM_INFINITY))\n"
        f"dcnsim.run({HUGE!r})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("_core.ScenarioError: scenario: a run needs about 3.1 GB (recorded ")
    assert re.search(
        r"more than the \d\.\d GB allowed \(80% of the 2\.\d GB left by the address-space limit "
        r"\(ulimit -v\); memory_limit / --memory-limit to change\)$",
        last,
    ), last


#: Two 10 Gbps sources of 64 B packets into a 1 Gbps host behind a switch buffer of a
#: billion packets: some 37 M packets a second pile up in the buffer, which the memory
#: estimate (a few KB: ports and routes) does not count.
DEEP_BUFFER = {"stop_time": "1s",
               "topology": {"kind": "star", "hosts": 3, "link": {"rate": "10Gbps"},
                            "host_rates": ["1Gbps", "10Gbps", "10Gbps"]},
               "network": {"queue": {"kind": "droptail", "capacity": "1000000000pkt"}},
               "traffic": {"streams": [{"src": s, "dst": 0, "rate": "10Gbps", "size": "64B"}
                                       for s in (1, 2)]}}  # fmt: skip


def test_a_run_that_outgrows_its_estimate_under_a_limit_ends_in_one_line(tmp_path):
    # Under a 1.5 GB address-space limit, above the estimate but below what the queued
    # packets take, this aborted the interpreter (SIGABRT, "memory allocation of
    # 536870912 bytes failed" in the packet arena's growth).
    path = tmp_path / "deep.toml"
    path.write_text(tomli_w.dumps(DEEP_BUFFER))
    proc = subprocess.run(
        [sys.executable, "-m", "dcnsim", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(
            resource.RLIMIT_AS, (1_500_000_000, resource.RLIM_INFINITY)
        ),
    )
    message = assert_one_error_line(proc)
    assert re.fullmatch(
        r"scenario: the run outgrew the memory the process may take: a table's growth to "
        r"\d+\.\d MB was refused at 0\.\d{6} s of simulated time \(more held at once than the "
        r"estimate "
        r"before the run counted: packets queued in deep buffers, events, flows\)",
        message,
    ), message


@pytest.mark.slow  # 10 to 25 s each; the 1.5 GB case above runs by default
@pytest.mark.parametrize("limit", [1_000_000_000, 1_300_000_000, 1_700_000_000, 2_200_000_000])
def test_a_refused_growth_under_any_address_space_limit_ends_the_run_in_one_line(tmp_path, limit):
    # A refused doubling used to grow the table by an eighth instead, into 1 GiB of
    # address space held for it (an eighth of the limit at most): the packet tables'
    # 64-byte-aligned rows grow by a copy, old and new buffer at once, which could
    # itself be refused and abort (exit 134). Now the refusal ends the run at once,
    # at whatever limit the growth meets (`prlimit --as`, the user's way to set it).
    path = tmp_path / "deep.toml"
    path.write_text(tomli_w.dumps(DEEP_BUFFER))
    proc = subprocess.run(
        ["prlimit", f"--as={limit}", sys.executable, "-m", "dcnsim", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    message = assert_one_error_line(proc)
    assert message.startswith(
        "scenario: the run outgrew the memory the process may take: a table's growth to "
    ), message


def test_a_run_just_within_its_estimate_under_an_address_space_limit_runs_and_writes(tmp_path):
    # The limit leaves the budget (80% of what is left) 50 MB above the estimate of a
    # run recording 1.95 M packets. This aborted the interpreter ("memory allocation
    # of 15619184 bytes failed"): the core held 1 GB of headroom (or half, a quarter)
    # beside the tables it was estimated to fit, and its rows' growth failed; the
    # rows converted to columns at the end and the whole-table copy the Parquet
    # writer made needed more again. Just below, the run is refused as before.
    script = f"""
import resource, sys, dcnsim
scenario = dcnsim.Scenario.from_toml_str({('stop_time = "100ms"' + chr(10) + RECORDED_STREAM)!r})
need = scenario.describe()["memory_bytes"]
vm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
limit = vm + int(need / 0.8) + int(sys.argv[1]) * 10**6
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
results = dcnsim.run(scenario)
results.write({str(tmp_path / "out")!r})
print(results.probe_latency.rows)
"""
    for margin in ("50", "-20"):
        proc = subprocess.run(
            [sys.executable, "-c", script, margin], capture_output=True, text=True, timeout=120
        )
        if margin == "-20":
            assert proc.returncode == 1
            assert "ScenarioError: scenario: a run needs about 312" in proc.stderr.splitlines()[-1]
            continue
        assert proc.returncode == 0, proc.stderr[-2000:]
        import pyarrow.parquet as pq

        rows = int(proc.stdout)
        assert rows > 1_900_000
        assert pq.ParquetFile(tmp_path / "out" / "probes.parquet").metadata.num_rows == rows


def fake_cgroups(root: Path, v2: bool, limits_by_group: dict[str, tuple[str, str]]) -> None:
    """A /proc and /sys under ``root`` as a process in cgroup /a/b sees them."""
    proc = root / "proc/self"
    proc.mkdir(parents=True)
    if v2:
        (proc / "cgroup").write_text("0::/a/b\n")
        mount = "sys/fs/cgroup"
        line = f"30 23 0:26 / /{mount} rw - cgroup2 cgroup2 rw\n"
        names = ("memory.max", "memory.current")
    else:
        (proc / "cgroup").write_text("5:cpu,cpuacct:/a/b\n4:memory:/a/b\n0::/\n")
        mount = "sys/fs/cgroup/memory"
        line = f"35 31 0:32 / /{mount} rw - cgroup cgroup rw,memory\n"
        names = ("memory.limit_in_bytes", "memory.usage_in_bytes")
    (proc / "mountinfo").write_text(line)
    for group, (limit, used) in limits_by_group.items():
        directory = root / mount / group
        directory.mkdir(parents=True, exist_ok=True)
        (directory / names[0]).write_text(limit + "\n")
        (directory / names[1]).write_text(used + "\n")


@pytest.mark.parametrize("v2", [True, False])
def test_the_cgroup_budget_is_the_tightest_ancestor_less_its_use(tmp_path, v2):
    from dcnsim.memory import cgroup_left

    none = "max" if v2 else str(2**63 - 4096)
    fake_cgroups(tmp_path / "n", v2, {"": (none, "9"), "a": (none, "5"), "a/b": (none, "1")})
    assert cgroup_left(tmp_path / "n") is None
    # /a allows 3000 and uses 1000: 2000 left for /a/b, whose own limit leaves 4000.
    fake_cgroups(tmp_path / "l", v2, {"a": ("3000", "1000"), "a/b": ("5000", "1000")})
    assert cgroup_left(tmp_path / "l") == 2000


def test_a_run_beyond_a_real_cgroup_limit_is_refused_naming_it(tmp_path):
    group = _new_memory_cgroup(tmp_path)
    limits_files = [group / n for n in ("memory.max", "memory.limit_in_bytes")]
    if not any(f.exists() for f in limits_files):
        group.rmdir()
        pytest.skip(f"the memory controller is not enabled for {group.parent}")
    for name in limits_files:
        if name.exists():
            name.write_text("2500000000")
    script = (
        f"import os, dcnsim\nopen({str(group / 'cgroup.procs')!r}, 'w').write(str(os.getpid()))\n"
        f"dcnsim.run({HUGE!r})\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
        )
    finally:
        group.rmdir()
    last = proc.stderr.splitlines()[-1]
    assert "left by the cgroup's memory limit; memory_limit / --memory-limit to change)" in last


def _new_memory_cgroup(tmp_path: Path) -> Path:
    """A new memory cgroup below this process's own, or a skip saying why not."""
    if os.environ.get("DCNSIM_TEST_CGROUPS") != "1":
        pytest.skip(
            "makes a memory cgroup on this machine: set DCNSIM_TEST_CGROUPS=1 where that is "
            "allowed (a CI container run as root)"
        )
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        top = Path("/sys/fs/cgroup") / ("" if controllers == "" else "memory")
        if controllers == "" and not (top / "cgroup.controllers").exists():
            continue
        if controllers in ("", "memory") or "memory" in controllers.split(","):
            group = top / path.lstrip("/") / f"dcnsim-test-{os.getpid()}"
            try:
                group.mkdir()
            except OSError as exc:
                pytest.skip(f"cannot make a memory cgroup at {group}: {exc.strerror}")
            return group
    pytest.skip("no memory cgroup hierarchy is mounted")


# --- the catalogue: hangs ------------------------------------------------------------------


def test_a_fifo_as_sweep_file_is_refused_at_once(tmp_path):
    # The sweep file was read with read_text(): a FIFO blocked it for ever.
    fifo = tmp_path / "sweep.toml"
    os.mkfifo(fifo)
    message = assert_one_error_line(
        cli("sweep", str(fifo), "--out", str(tmp_path / "o"), timeout=30)
    )
    assert message == f"{fifo}: cannot read: it is not a regular file"


def test_thirty_thousand_nested_tables_in_a_set_value_are_refused_at_once():
    started = time.monotonic()
    message = assert_one_error_line(cli("validate", TREE3, "--set", f"x={DEEP_TABLE}", timeout=30))
    # One value, given as KEY=VALUE: no line number, the key names it (issue 48).
    assert message.startswith("argument --set: x: values nested more than 64 levels deep")
    assert time.monotonic() - started < 30


# --- the catalogue: silent acceptance --------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"chunk_rows": True}, "chunk_rows: expected a whole number of rows, not True"),
     ({"memory_limit": True}, "memory_limit: expected a number of bytes (a positive integer) or "
                              "a size such as '8GB', not True")],
)  # fmt: skip
def test_a_boolean_is_not_taken_as_a_number(kwargs, message):
    # chunk_rows=True ran with chunks of one row; memory_limit=True refused every run
    # as needing more than 1 B.
    with pytest.raises(ScenarioError) as err:
        dcnsim.run(STAR_DICT, **kwargs)
    assert str(err.value) == message


def test_a_string_beyond_the_bound_is_refused_not_kept():
    # A 100,000-character name was taken and copied into every output.
    with pytest.raises(ScenarioError) as err:
        dcnsim.Scenario(STAR_DICT).set("name", "x" * 100_000)
    assert str(err.value) == "name: a string of 100000 characters, more than the 65536 allowed"


# --- the catalogue: signals ----------------------------------------------------------------


def ctrl_c_outcomes(tmp_path: Path, tries: int) -> list[tuple[float, int, str]]:
    """``dcnsim run`` of an endless scenario, SIGINT at a random moment of its first
    second, ``tries`` times: (moment, exit status, stderr) of each."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(f'stop_time = "1000s"\n{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\n'
                        "load = 0.5\n")  # fmt: skip
    rng = random.Random(36)
    outcomes = []
    for i in range(tries):
        proc = interruptible(
            [sys.executable, "-m", "dcnsim", "run", str(scenario), "--no-progress",
             "--out", str(tmp_path / f"out{i}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        moment = rng.uniform(0, 1)
        time.sleep(moment)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        outcomes.append((moment, proc.returncode, stderr))
        assert not list(tmp_path.glob(".out*")), "a temporary output directory was left"
    return outcomes


def assert_each_ctrl_c_is_one_line(outcomes: list[tuple[float, int, str]]) -> None:
    """Exit 130 and ``error: interrupted`` once any of dcnsim has run. Before that
    (the interpreter's own start-up, tens of ms, more on a loaded machine: before
    Python installs its handler, or in its site and runpy imports) the process ends
    as any Python program then does: by the signal (status 130 to a shell), or exit
    1 where Python's own initialisation is interrupted; nothing of dcnsim ran, so no
    frame of it is in what was printed."""
    for moment, status, stderr in outcomes:
        if status == 130 and stderr == "error: interrupted\n":
            continue
        assert status in (-signal.SIGINT, 1), (moment, status, stderr)
        assert "dcnsim" not in stderr and "panicked" not in stderr, (moment, status, stderr)


def test_ctrl_c_at_any_moment_of_start_up_is_one_line(tmp_path):
    # Was, 3 times in 8, exit 1 and a 154-line Rust panic (the NumPy capsule under
    # KeyboardInterrupt), or a traceback through the imports.
    assert_each_ctrl_c_is_one_line(ctrl_c_outcomes(tmp_path, 20))


def test_ctrl_c_landing_in_a_finalizer_is_not_lost():
    # A KeyboardInterrupt raised while a finalizer runs (here a generator closed as it
    # is dropped) cannot propagate; Python printed "Exception ignored" and the command
    # went on (once in some 700 Ctrl-C's of start-up, `dcnsim run` ran on after one).
    script = """
import _thread, sys, time
import dcnsim.__main__ as entry
from dcnsim import cli

def suspended():
    try:
        yield
    finally:
        _thread.interrupt_main()  # Ctrl-C while the finalizer runs
        _ = [0]  # its KeyboardInterrupt is raised here, inside the finalizer

def command():
    generator = suspended()
    next(generator)
    del generator
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pass
    print("the interrupt was lost")
    return 0

cli.main = command
sys.exit(entry.main())
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "error: interrupted\n")


@pytest.mark.slow
def test_two_hundred_ctrl_c_at_start_up_are_each_one_line(tmp_path):
    outcomes = ctrl_c_outcomes(tmp_path, 200)
    assert_each_ctrl_c_is_one_line(outcomes)
    clean = sum(
        status == 130 and stderr == "error: interrupted\n" for _, status, stderr in outcomes
    )
    print(f"{clean} of 200 exited 130 with one line; the rest in the interpreter's start-up")


#: A recorded stream of 64 B packets at 10 Gbps: 19,531 rows per simulated ms, which
#: the core writes to probes.parquet in chunks as the run goes (2^18 rows each).
RECORDED_STREAM = (f"{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\nrate = \"10Gbps\"\n"
                   'size = "64B"\nrecord = true\n')  # fmt: skip


def old_output(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """An output directory a finished run wrote, and its files' bytes."""
    out = tmp_path / "out"
    assert cli("run", TREE3, "--out", str(out), "--no-progress").returncode == 0
    return out, {p.name: p.read_bytes() for p in out.iterdir()}


def test_ctrl_c_while_the_core_writes_parquet_keeps_the_old_output_whole(tmp_path):
    # The core writes probes.parquet itself (issue 35), chunk by chunk. Ctrl-C once
    # its first chunk is in the file, at a random moment of what follows (more
    # chunks, the end of the run, the last tables): exit 130 with one line and the
    # old output as it was, or (too late to stop) exit 0 and the whole new output;
    # never a temporary directory left.
    import pyarrow.parquet as pq

    scenario = tmp_path / "stream.toml"
    scenario.write_text(f'stop_time = "40ms"\n{RECORDED_STREAM}')
    out = tmp_path / "out"
    rng = random.Random(35)
    outcomes = []
    for i in range(9):
        proc = interruptible(
            [sys.executable, "-m", "dcnsim", "run", str(scenario), "--no-progress",
             "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".out.*.tmp/probes.parquet")):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.005)
        first_chunk = time.monotonic()
        if i == 0:  # uninterrupted: the old output, and how long the writing lasts
            assert proc.wait(timeout=60) == 0
            writing = time.monotonic() - first_chunk
        else:
            time.sleep(rng.uniform(0, 0.8 * writing))
            proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert not list(tmp_path.glob(".out.*")), "a temporary output directory was left"
        if proc.returncode == 0:
            summary = json.loads((out / "summary.json").read_text())
            rows = pq.ParquetFile(out / "probes.parquet").metadata.num_rows
            assert rows == summary["packets_injected"] > 700_000
            before = {p.name: p.read_bytes() for p in out.iterdir()}
        else:
            assert (proc.returncode, stderr) == (130, "error: interrupted\n")
            assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        outcomes.append(proc.returncode)
    assert outcomes.count(130) >= 2, outcomes


def test_a_disk_filling_while_the_core_writes_is_one_line_and_keeps_the_old_output(tmp_path):
    # A file-size limit (ulimit -f; Python ignores SIGXFSZ, so a write past it fails
    # with EFBIG) stands for a disk that fills while probes.parquet grows, chunk by
    # chunk, in the core's writer.
    out, before = old_output(tmp_path)
    scenario = tmp_path / "stream.toml"
    scenario.write_text(f'stop_time = "100ms"\n{RECORDED_STREAM}')
    limit = 4 << 20  # the run's probes.parquet is about 20 MB
    proc = subprocess.run(
        [sys.executable, "-m", "dcnsim", "run", str(scenario), "--no-progress", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )  # fmt: skip
    message = assert_one_error_line(proc)
    assert message == f"--out '{out}': '{out / 'probes.parquet'}': File too large"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "stream.toml"]


def test_sigterm_at_ten_moments_of_a_run_with_out_is_one_line_and_keeps_the_old_output(
    tmp_path,
):
    # Issue 48: SIGTERM (kill, timeout, Slurm, Kubernetes) killed the process without a
    # word and left a hidden .out.XXXX.tmp beside --out. Ten moments spread over a run
    # with --out, from the interpreter's start-up through the core writing
    # probes.parquet chunk by chunk to the last tables: each ends with exit 143 and one
    # line, the old output byte-identical, or (too late to stop) exit 0 and the whole
    # new output; never a temporary directory left.
    out, before = old_output(tmp_path)
    scenario = tmp_path / "stream.toml"
    scenario.write_text(f'stop_time = "40ms"\n{RECORDED_STREAM}')
    command = [sys.executable, "-m", "dcnsim", "run", str(scenario), "--no-progress",
               "--out", str(out)]  # fmt: skip
    # The run's length, the shortest of three: a run slowed by a busy machine would
    # put the last moments after the faster runs' end.
    lengths = []
    for _ in range(3):
        started = time.monotonic()
        assert subprocess.run(command, capture_output=True, timeout=120).returncode == 0
        lengths.append(time.monotonic() - started)
    whole = min(lengths)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    outcomes = []
    for i in range(10):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        moment = 0.2 + i * (whole - 0.2) / 10
        time.sleep(moment)
        proc.terminate()
        _, stderr = proc.communicate(timeout=60)
        assert not list(tmp_path.glob(".out.*")), "a temporary output directory was left"
        if proc.returncode == 0:
            before = {p.name: p.read_bytes() for p in out.iterdir()}
        elif proc.returncode == -signal.SIGTERM:
            # Still in the interpreter's start-up (slow under load), before the entry
            # point installs its handler: the default action, before anything is
            # written.
            assert stderr == "", moment
            assert {p.name: p.read_bytes() for p in out.iterdir()} == before, moment
        else:
            assert (proc.returncode, stderr) == (143, "error: terminated\n"), moment
            assert {p.name: p.read_bytes() for p in out.iterdir()} == before, moment
        outcomes.append((round(moment, 2), proc.returncode))
    print(f"run of {whole:.2f} s; SIGTERM at (s, exit status): {outcomes}")
    assert sum(status == 143 for _, status in outcomes) >= 8, outcomes


def test_sigterm_before_the_command_starts_is_one_line_too():
    # The entry point's first handler: SIGTERM while the command line is imported.
    script = """
import os, signal, sys
import dcnsim.__main__ as entry
sys.argv = ["dcnsim", "list"]
import dcnsim.cli
dcnsim.cli.main = lambda: os.kill(os.getpid(), signal.SIGTERM) or 0
sys.exit(entry.main())
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (143, "error: terminated\n")


def test_sigterm_stops_a_study_in_one_line_with_its_workers_and_old_output(tmp_path):
    # SIGTERM to the process group of `dcnsim study --out` while its workers run: one
    # line, exit 143, no worker left, the old output as it was, nothing temporary.
    out = tmp_path / "out"
    out.mkdir()
    (out / "study.csv").write_text("an earlier study's table\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcnsim", "study", "incast", "--quick", "--jobs", "2",
         "--no-progress", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    time.sleep(4)
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    # The runs that finished are kept beside --out for the rerun (test_study_resume.py);
    # with none finished, nothing is.
    keeps = tmp_path / ".out.runs"
    kept = len(list(keeps.glob("*.pickle")))
    said = f": {kept} finished runs of the study are kept in {keeps}; "
    said += "run the same study again to resume"
    assert (proc.returncode, stdout, stderr) == (
        143,
        "",
        f"error: terminated{said if kept else ''}\n",
    )
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):  # no worker outlived the study
        os.killpg(proc.pid, 0)
    assert [p.name for p in out.iterdir()] == ["study.csv"]
    assert (out / "study.csv").read_text() == "an earlier study's table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.runs"] * bool(kept) + ["out"]


def test_study_flags_are_checked_before_any_run(tmp_path):
    started = time.monotonic()
    for args, field in [
        (["--seeds", str(10**12)], "argument --seeds: 1,000,000,000,000 seeds, more than the "
                                   "100,000 runs a study may have"),
        (["--out", "/proc/x"], "--out '/proc/x': "),
    ]:  # fmt: skip
        proc = cli("study", "incast", "--quick", "--jobs", "1", *args, timeout=60)
        assert field in assert_one_error_line(proc), args
    assert time.monotonic() - started < 30  # no run: a quick incast study takes minutes


def test_a_sweep_into_an_unwritable_place_is_refused_before_any_run(tmp_path):
    sweep = sweep_file(tmp_path, "")
    for out in ("/proc/x", "/proc/self"):
        message = assert_one_error_line(cli("sweep", sweep, "--out", out, timeout=60))
        assert message.startswith(f"--out '{out}': "), message
    assert not list(Path("/proc").glob(".x.*"))


def test_results_write_to_an_unwritable_place_names_its_argument():
    results = dcnsim.run(STAR_DICT)
    with pytest.raises(ScenarioError) as err:
        results.write("/proc/x")
    assert str(err.value).startswith("out_dir '/proc/x': ")


def test_a_killed_writer_leaves_a_temporary_directory_the_next_run_removes(tmp_path):
    scenario = tmp_path / "long.toml"
    scenario.write_text(f'stop_time = "1000s"\n{STAR}[[traffic.streams]]\nsrc = 0\ndst = 1\n'
                        "load = 0.5\nrecord = true\n")  # fmt: skip
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcnsim", "run", str(scenario), "--out", str(out), "--no-progress"]
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".out.*.tmp/probes.parquet")) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    (left,) = tmp_path.glob(".out.*.tmp")
    # Kept: a name dcnsim does not give, and a temporary directory a live writer holds.
    (tmp_path / ".out.notours.tmp").mkdir()
    live = tmp_path / ".out.abcdefgh.tmp"
    live.mkdir()
    holder = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        assert cli("run", TREE3, "--out", str(out), "--no-progress").returncode == 0
    finally:
        os.close(holder)
    assert not left.exists()
    assert sorted(p.name for p in tmp_path.glob(".out.*")) == [
        ".out.abcdefgh.tmp",
        ".out.notours.tmp",
    ]
    assert (out / "summary.json").is_file()


#: The issue's silent acceptances, each now one line naming its field (through --set
#: on a small star, so each is exactly the one change): docs/scenario.md, Bounds.
NONSENSE_BASE = """stop_time = "2ms"
[topology]
kind = "star"
hosts = 3
link = { rate = "10Gbps", delay = "1us" }
[[traffic.streams]]
src = 0
dst = 1
rate = "1Gbps"
[[traffic.flows]]
src = 1
dst = 2
size = "20KB"
[[traffic.probes]]
src = 2
dst = 0
"""


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("stop_time=0us", "stop_time: a run of zero length"),
        ("topology.link.delay=17020800s", "topology.link.delay: a delay of 17020800 s is beyond"),
        ("transport.rwnd=1B", "transport.rwnd: 1 B is smaller than one segment"),
        ("traffic.probes[0].size=1B", "traffic.probes[0].size: packet size 1 B is smaller"),
        ("traffic.streams[0].rate=1000Tbps", "traffic.streams[0].rate: 1000000000000000 bps is"),
        ("network.queue.capacity=1B", "network.queue.capacity: 1 B holds no full packet"),
        ("traffic.flows[0].start=3ms", "traffic.flows[0].start: the flow starts at 3000us"),
        ("traffic.streams[0].start=2ms", "traffic.streams[0].start: the stream starts at 2000us"),
    ],
)
def test_physical_nonsense_is_one_line_naming_the_field(tmp_path, change, field):
    path = tmp_path / "s.toml"
    path.write_text(NONSENSE_BASE)
    assert cli("validate", str(path)).returncode == 0
    message = assert_one_error_line(cli("validate", str(path), "--set", change))
    assert message.startswith(field), message


def test_a_faster_than_link_stream_runs_when_the_scenario_says_so(tmp_path):
    path = tmp_path / "s.toml"
    allowed = 'rate = "20Gbps"\nfaster_than_link = true'
    path.write_text(NONSENSE_BASE.replace('rate = "1Gbps"', allowed))
    proc = cli("run", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "dropped" in proc.stdout


def test_a_cdf_size_beyond_a_terabyte_is_refused(tmp_path):
    (tmp_path / "huge.cdf").write_text("1000 0.5\n1e300 1\n")
    path = tmp_path / "s.toml"
    path.write_text(
        NONSENSE_BASE + '[[traffic.workloads]]\nsrc = 0\ndst = 2\ncdf = "huge.cdf"\nload = 0.5\n'
    )
    message = assert_one_error_line(cli("validate", str(path)))
    assert message.startswith("traffic.workloads[0].cdf: ")
    assert message.endswith("line 2: size 1e300 B is beyond the 1e12 B (1 TB) bound of a flow size")


def test_workloads_that_open_no_flow_are_a_warning_in_the_summary(tmp_path):
    workload = '[[traffic.workloads]]\nsrc = 0\ndst = 2\nsize = "{size}"\nload = 0.1\n'
    path = tmp_path / "s.toml"
    path.write_text(NONSENSE_BASE + workload.format(size="100GB"))  # one per 800 s
    proc = cli("run", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "  warning      traffic.workloads (1) opened no flow" in proc.stdout
    path.write_text(NONSENSE_BASE + workload.format(size="10KB"))
    proc = cli("run", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("topology.link.delay=25", 'topology.link.delay: invalid type: integer `25`, expected '
         'a string with a unit, such as "25us"'),
        ("topology.link.rate=10", 'topology.link.rate: invalid type: integer `10`, expected '
         'a string with a unit, such as "10Gbps"'),
        ("network.queue.capacity=100", 'network.queue.capacity: invalid type: integer `100`, '
         'expected a string with a unit, such as "100pkt"'),
        ("traffic.flows[0].size=2e4", 'traffic.flows[0].size: invalid type: floating point '
         '`20000.0`, expected a string with a unit, such as "20000B"'),
    ],
)  # fmt: skip
def test_a_number_without_its_unit_suggests_the_unit(tmp_path, change, message):
    path = tmp_path / "s.toml"
    path.write_text(NONSENSE_BASE)
    assert assert_one_error_line(cli("validate", str(path), "--set", change)) == message
