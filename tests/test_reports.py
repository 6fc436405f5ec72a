"""report.html of a study and of a sweep, opened in headless Chromium: every figure
decodes, the page logs no error, and the screenshot is a page, not a blank."""

from __future__ import annotations

import html
import re

import pandas as pd
from PIL import Image

from simhelp import cli, render_in_chromium
from test_sweeps import SMALL, write_sweep


def check_page(report, tmp_path, figures: int) -> None:
    probe, console, shot = render_in_chromium(report, tmp_path)
    assert probe == {"images": figures, "broken": 0, "errors": []}, probe
    assert console == [], console
    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 50  # not blank


def test_study_report_in_chromium(tmp_path):
    out = tmp_path / "spraying"
    proc = cli("study", "spraying", "--quick", "--jobs", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    report = out / "report.html"
    text = report.read_text()
    # The seed-vs-dcnsim table says what claims.csv and the printed [yes]/[NO] lines say.
    claims = pd.read_csv(out / "claims.csv", keep_default_na=False)
    verdicts = re.findall(r"<td class='(yes|NO|n/a)'>", text)
    assert verdicts == list(claims["verdict"])
    printed = re.findall(r"\[(yes|NO |n/a)\]", proc.stdout)
    assert [v.strip() for v in printed] == list(claims["verdict"])
    # The exact scenarios: one per run, each the TOML that reproduces it.
    assert text.count("<details>") == 2 * 3 * 3
    first = re.search(r"<pre>(name = &quot;spraying.*?)</pre>", text, re.S)
    assert first and "[topology]" in html.unescape(first.group(1))
    check_page(report, tmp_path, figures=3)


def test_sweep_report_in_chromium(tmp_path):
    spec = {**SMALL, "grid": {"transport.protocol": ["newreno", "dctcp"]}}
    spec["figures"] = [{"name": "fct", "table": "flows", "x": "seed", "y": "fct_s"}]
    proc = cli(
        "sweep", str(write_sweep(tmp_path, spec)), "--out", str(tmp_path / "out"), "--report"
    )
    assert proc.returncode == 0, proc.stderr
    check_page(tmp_path / "out" / "report.html", tmp_path, figures=1)
