"""Port stages through the user's front door: a token bucket on a host NIC spaces a
class at its rate (the closed form), and a scenario's stage errors are one line
naming the field.

Host 0 (10 Gbps) sends a constant 5 Gbps stream of 1500 B class-3 datagrams to
host 1; its NIC limits class 3 to 1 Gbps with no burst, so packet k leaves at
12k us and arrives 4.4 us later (two hops of 1.2 us serialization and 1 us
propagation). See crates/dcnsim-core/tests/stages.rs for the stamp stage.
"""

import numpy as np
import pytest

import dcnsim
from dcnsim.run_text import format_summary
from simhelp import run_checked, star


def shaped(stages: list[dict]) -> dict:
    return {
        **star(2, link={"rate": "10Gbps", "delay": "1us"}),
        "network": {"stages": stages},
        "traffic": {
            "streams": [
                {"src": 0, "dst": 1, "rate": "5Gbps", "pattern": "constant",
                 "size": "1500B", "stop": "600us", "class": 3, "record": True}
            ]
        },
    }  # fmt: skip


BUCKET = {"kind": "token_bucket", "ports": "nics",
          "classes": [{"class": 3, "rate": "1Gbps"}]}  # fmt: skip


def test_a_token_bucket_spaces_a_class_at_its_rate():
    results = run_checked(shaped([BUCKET]))
    received = results.probes["received_s"].to_numpy()
    k = np.arange(len(received))
    assert len(received) == 250
    np.testing.assert_allclose(received, (12 * k + 4.4) * 1e-6, rtol=0, atol=1e-12)
    # No agent wrote rows: the table is there, empty, with its columns.
    assert list(results.agent_rows.columns) == ["time_s", "switch", "agent", "key", "value"]
    assert results.agent_rows.empty


@pytest.mark.parametrize(
    ("stage", "path", "reason"),
    [
        (BUCKET | {"ports": "spines"}, "network.stages[0].ports", "not a port group"),
        (BUCKET | {"classes": []}, "network.stages[0].classes", "no class"),
        (BUCKET | {"classes": [{"class": 8, "rate": "1Gbps"}]},
         "network.stages[0].classes[0].class", "0 to 7"),
        ({"kind": "max_occupancy"}, "network.stages[0].ports", "missing"),
    ],
)  # fmt: skip
def test_stage_errors_name_the_field(stage, path, reason):
    with pytest.raises(dcnsim.ScenarioError) as e:
        dcnsim.Scenario(shaped([stage])).validate()
    assert str(e.value).startswith(f"{path}: ")
    assert reason in str(e.value)


def test_the_summary_reports_qjumps_epoch_and_level_rates():
    """Two hosts of 10 Gbps: the epoch 2nP/R is 2 x 2 x 1500 B / 10 Gbps = 4.8 us, and a
    level of f = 4 sends 4 x 1500 B per epoch, 10 Gbps (f R / 2n): the stream's
    5 Gbps passes."""
    qjump = {"kind": "qjump", "ports": "nics", "levels": [{"class": 3, "f": 4}]}
    results = run_checked(shaped([qjump]))
    (report,) = results.summary["stages"]
    assert report["epoch_s"] == pytest.approx(4.8e-6, abs=1e-18)
    assert report["levels"] == [
        {"class": 3, "f": 4.0, "bytes_per_epoch": 6000, "rate_bps": pytest.approx(10e9)}
    ]
    assert results.probes["received_s"].notna().all()
    assert "stage        qjump epoch 4.800 us (2 hosts); class 3 f=4" in format_summary(results)
    # Without a stage that reports, the summary has no such key.
    assert "stages" not in run_checked(shaped([BUCKET])).summary
