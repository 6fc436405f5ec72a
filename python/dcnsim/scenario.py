"""Scenarios: plain data, read from TOML or built in Python, checked by the Rust core.

The schema (every key, unit and default) lives in ``docs/scenario.md`` and is enforced
in one place, the Rust core (``_core.validate``). This module only moves data: it reads
TOML, copies dicts, sets dotted keys and serializes to the canonical JSON that the core
takes. The same content gives the same JSON, whether it came from a file or from Python.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from dcnsim import _core, flow_files, limits
from dcnsim._core import ScenarioError
from dcnsim.formats import format_seconds
from dcnsim.labels import scenario_line
from dcnsim.memory import format_bytes
from dcnsim.notebook import summary_html

__all__ = ["Scenario", "ScenarioError", "as_scenario", "validate"]

_SEGMENT = re.compile(r"^([^.\[\]]+)((?:\[\d+\])*)$")


class Scenario:
    """One run's full description, as a nested dict of TOML-like values.

    ``Scenario(data, **sections)`` copies ``data`` (a dict shaped like the TOML file)
    and then sets each keyword as a top-level key, so these two are the same::

        Scenario({"topology": {"kind": "star", "hosts": 2}}, seed=3)
        Scenario(topology={"kind": "star", "hosts": 2}, seed=3)

    A Scenario is never modified in place by its methods: ``set`` returns a copy.
    """

    def __init__(self, data: Mapping[str, Any] | None = None, **sections: Any) -> None:
        if data is not None and not isinstance(data, Mapping):
            raise ScenarioError(f"Scenario(data): {_not_a_table(data)}")
        limits.check_data(data or {}, "")
        self._data: dict[str, Any] = copy.deepcopy(dict(data or {}))
        for key, value in sections.items():
            limits.check_data(value, key)
            self._data[key] = copy.deepcopy(value)

    # --- construction -------------------------------------------------------------

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a scenario file. Unreadable files and bad TOML raise ScenarioError.

        A workload's ``cdf`` that is a relative file path (not a shipped name such
        as ``"websearch"``) is taken relative to the scenario file's directory and
        stored as an absolute path, so the file runs from any working directory.
        """
        if not isinstance(path, str | os.PathLike):
            raise ScenarioError(f"from_toml: expected a file path, not {_kind(path)} {path!r:.40}")
        shown = os.fsdecode(path)
        try:
            raw = limits.read_small_file(path)
        except ValueError as exc:  # a NUL in the path
            raise ScenarioError(f"scenario: cannot read {shown!r}: {exc}") from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ScenarioError(f"scenario: cannot read '{shown}': {reason}") from None
        scenario = cls._from_toml_text(raw, f"'{shown}'")
        _anchor_cdf_paths(scenario._data, Path(path).absolute().parent)
        flow_files.anchor(scenario._data, Path(path).absolute().parent)
        return scenario

    @classmethod
    def from_toml_str(cls, text: str) -> Scenario:
        """Parse a scenario from TOML text."""
        if not isinstance(text, str):
            raise ScenarioError(
                f"from_toml_str: expected TOML text (str), not {_kind(text)} {text!r:.40}"
            )
        return cls._from_toml_text(text, "scenario text")

    @classmethod
    def _from_toml_text(cls, text: str | bytes, where: str) -> Scenario:
        try:
            if isinstance(text, bytes):
                text = text.decode("utf-8")
            data = limits.loads(text)
        except limits.LimitError as exc:
            raise ScenarioError(f"scenario: {where} {exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            reason = _duplicate_key(" ".join(str(exc).split()), text)
            raise ScenarioError(f"scenario: invalid TOML in {where}: {reason}") from None
        return cls(data)

    # --- views --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the scenario data."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys), the form the core takes, with the flows of any
        ``[[traffic.flows_file]]`` read in (``dcnsim.flow_files``; that scenario is
        validated here, so an error names the file and row)."""
        data, first, origins = flow_files.expand(self._data)
        text = json.dumps(
            _plain(data, ""), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        if origins:
            try:
                _core.validate(text)
            except ScenarioError as exc:
                raise ScenarioError(flow_files.where_from(str(exc), first, origins)) from None
        return text

    def to_toml(self) -> str:
        """TOML text that reads back as an equal Scenario."""
        try:
            return tomli_w.dumps(_plain(self._data, ""))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"scenario: cannot be written as TOML: {exc}") from None

    def get(self, key: str, default: Any = None) -> Any:
        """The value at a dotted key (``"forwarding.policy"``), or ``default``."""
        node: Any = self._data
        for part in _parse_key(key):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return default
        return copy.deepcopy(node)

    # --- edits --------------------------------------------------------------------

    def set(self, key: str, value: Any, *, check: bool = True) -> Scenario:
        """A copy with the dotted ``key`` set to ``value``; missing tables are created.

        List items are addressed as ``traffic.streams[0].rate`` (or ``...streams.0.rate``).
        A key the schema does not have (``forwarding.polcy``) raises ScenarioError at
        once, naming it, as ``run`` would (``check=False`` skips that: for a caller that
        checked the key already, as a sweep does for each grid key); its value is
        checked with the whole scenario (``validate``, ``run``).
        """
        changed = self._with(key, value)
        if check:
            _check_key_path(changed._data, _parse_key(key))
        return changed

    def _with(self, key: str, value: Any) -> Scenario:
        parts = _parse_key(key)
        data = self.to_dict()
        node: Any = data
        walked = ""
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(node, dict):
                if isinstance(part, int):
                    raise ScenarioError(f"{walked}: is a table, not a list")
                if last:
                    node[part] = copy.deepcopy(value)
                else:
                    node = node.setdefault(part, {})
                walked = limits.join(walked, part)
            elif isinstance(node, list):
                if isinstance(part, str) and not part.isdigit():
                    raise ScenarioError(f"{walked}: is a list, use {walked}[INDEX]")
                index = int(part)
                if index >= len(node):
                    raise ScenarioError(
                        f"{walked}[{index}]: index out of range, the list has {len(node)} items"
                    )
                if last:
                    node[index] = copy.deepcopy(value)
                else:
                    node = node[index]
                walked = f"{walked}[{index}]"
            else:
                raise ScenarioError(f"{walked}: is a {_kind(node)}, not a table")
        return Scenario(data)

    # --- checks -------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """What the (valid) scenario contains: hosts, switches, links, ports, and its
        probe packets, streams, listed flows, workloads, incast applications and
        agents (entries), the stop time, and the memory estimate (``memory_bytes``
        and ``memory``, by term). Raises
        ScenarioError like :meth:`validate`."""
        return _core.describe(self.to_json())

    def validate(self) -> None:
        """Check the whole scenario in the core; raises ScenarioError naming the field."""
        _core.validate(self.to_json())

    # --- dunder -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self._data == other._data

    __hash__ = None  # type: ignore[assignment]  # mutable content

    def _repr_html_(self) -> str:
        """A notebook's view (``dcnsim.notebook``): the name and seed, what the scenario
        sets, and what it contains (hosts, switches, traffic, stop time, memory), or
        why it is not valid."""
        facts: list[tuple[str, Any]] = []
        if self.get("seed") is not None:
            facts.append(("seed", self.get("seed")))
        try:
            d = self.describe()
        except ScenarioError as exc:
            facts.append(("not valid", str(exc)))
        else:
            facts += [
                ("network", f"{d['hosts']:,} hosts, {d['switches']:,} switches, "
                            f"{d['links']:,} links ({d['ports']:,} ports)"),
                ("traffic", f"{d['probe_packets']:,} probe packets, {d['streams']:,} streams, "
                            f"{d['flows']:,} listed flows"),
                ("stops", "when traffic ends" if d["stop_time_s"] is None
                          else f"at {format_seconds(d['stop_time_s'])}"),
                ("memory", f"about {format_bytes(d['memory_bytes'])}"),
            ]  # fmt: skip
        return summary_html(self.get("name"), scenario_line(self._data), facts)

    def __repr__(self) -> str:
        topology = self._data.get("topology")
        kind = topology.get("kind") if isinstance(topology, Mapping) else None
        name = self._data.get("name", "")
        return f"Scenario(name={name!r}, topology={kind!r})"


def as_scenario(scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str]) -> Scenario:
    """Accept a Scenario, a dict, or the path of a TOML file."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario(scenario)
    if isinstance(scenario, str | os.PathLike):
        return Scenario.from_toml(scenario)
    raise ScenarioError(
        f"scenario: expected a Scenario, a dict or a path, not {_kind(scenario)} {scenario!r:.40}"
    )


def validate(scenario: Scenario | Mapping[str, Any] | str | os.PathLike[str]) -> None:
    """Validate a scenario (or a TOML file); raises ScenarioError naming the field."""
    as_scenario(scenario).validate()


# --- helpers ----------------------------------------------------------------------


def _anchor_cdf_paths(data: dict[str, Any], base: Path) -> None:
    """Make each relative ``traffic.workloads[i].cdf`` file path relative to ``base``.

    Shipped names, absolute paths and values that are not strings (the core reports
    those) are left alone.
    """
    traffic = data.get("traffic")
    workloads = traffic.get("workloads") if isinstance(traffic, dict) else None
    if not isinstance(workloads, list):
        return
    for workload in workloads:
        if not isinstance(workload, dict):
            continue
        cdf = workload.get("cdf")
        if isinstance(cdf, str) and cdf not in _core.SHIPPED_CDFS and cdf.strip():
            if not os.path.isabs(cdf):
                workload["cdf"] = os.fspath(base / cdf)


def _parse_key(key: str) -> list[str | int]:
    if not isinstance(key, str):
        raise ScenarioError(
            f"key: expected a dotted key (str) such as forwarding.policy, "
            f"not {_kind(key)} {key!r:.40}"
        )
    if key.count(".") + key.count("[") >= limits.MAX_KEY_PARTS:
        raise ScenarioError(
            f"{limits.escape(key[:40])}...: a key of more than {limits.MAX_KEY_PARTS} parts"
        )
    parts: list[str | int] = []
    for segment in key.split("."):
        match = _SEGMENT.match(segment.strip())
        if not match:
            raise ScenarioError(f"{key}: not a dotted key such as forwarding.policy")
        parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\d+", match.group(2)))
    return parts


#: The smallest valid scenario: ``set`` tries the section a key is in alone beside it.
_PROBE = {"topology": {"kind": "star", "hosts": 2}}


def _check_key_path(data: Mapping[str, Any], parts: list[str | int]) -> None:
    """Refuse a key the schema does not have: the section holding it (``parts[0]``),
    after the change, is validated beside ``_PROBE``; an unknown-key error at the key or
    at one of its parents is raised, any other error is left to ``validate``."""
    path = ""
    for part in parts:
        path = f"{path}[{part}]" if isinstance(part, int) else limits.join(path, part)
    section = str(parts[0])
    probe = {**_PROBE, section: data[section]}
    if section == "traffic" and isinstance(data[section], Mapping):  # files not read here
        probe["traffic"] = {k: v for k, v in data[section].items() if k != "flows_file"}
    try:
        _core.validate(json.dumps(_plain(probe, ""), ensure_ascii=False))
    except ScenarioError as exc:
        message = str(exc)
        where = message.split(": ", 1)[0]
        inside = path == where or path.startswith((f"{where}.", f"{where}["))
        if "unknown key" in message and inside:
            raise ScenarioError(message) from None


def _kind(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


def _not_a_table(data: Any) -> str:
    """Why ``data`` cannot be a scenario's data: a string is probably a path."""
    shown = f"expected a dict of sections, not {_kind(data)} {data!r:.40}"
    if isinstance(data, str | os.PathLike):
        return f"{shown} (to read a scenario file: Scenario.from_toml)"
    return shown


_OVERWRITE = re.compile(r"^Cannot overwrite a value \(at line (\d+), column \d+\)$")


def _duplicate_key(reason: str, text: str | bytes) -> str:
    """tomllib's message, naming the key when it only says a value was overwritten."""
    match = _OVERWRITE.match(reason)
    if not match or not isinstance(text, str):
        return reason
    lines = text.splitlines()
    line = int(match.group(1))
    key = lines[line - 1].split("=", 1)[0].strip() if line <= len(lines) else ""
    return f"duplicate key {key} (line {line})" if key else reason


def _text(value: str, path: str) -> str:
    """``value`` if it is text the core can take (UTF-8: no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ScenarioError(f"{path}: not valid Unicode text (a lone surrogate)") from None
    return value


def _plain(value: Any, path: str) -> Any:
    """The value as plain JSON/TOML data (dict, list, str, bool, int, float, None).

    numpy scalars become Python numbers; anything JSON cannot carry raises
    ScenarioError naming where it is. This is serialization, not schema checking.
    """
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ScenarioError(f"{path or 'scenario'}: key {key!r} is not a string")
            out[_text(key, path or "scenario")] = _plain(item, limits.join(path, key))
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, str):
        return _text(value, path)
    if isinstance(value, int) and not isinstance(value, bool):
        if not -(2**63) <= value < 2**64:
            raise ScenarioError(f"{path}: {value} is too large for a 64-bit integer")
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError(f"{path}: {value} is not a finite number")
        return value
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item) and getattr(value, "shape", None) == ():
        return _plain(item(), path)
    raise ScenarioError(f"{path}: unsupported value {value!r} of type {type(value).__name__}")
