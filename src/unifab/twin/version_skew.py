"""Twin scenario ``version-skew``: a few devices on an older release than the rest of their group, in the real
files, with the truth ``FLEET-*`` must find.

:func:`apply_version_skew` edits a written bundle (so it composes with any generator option): per chosen device
one of

* NIC firmware (``cmd/ibv_devinfo.txt``: ``fw_ver`` of every NIC of the host) -> ``FLEET-FIRMWARE`` on its NICs;
* NIC driver (``sys/module/<driver>/version``) or GPU driver (``cmd/nvidia-smi-q.xml`` ``driver_version``)
  -> ``FLEET-DRIVER`` on the host;
* NCCL (the host's ``NCCL version`` lines in its job's ``telemetry/nccl/<job id>.log``, which
  :func:`~unifab.twin.version_files.write_nccl_logs` writes first for every running job without one) ->
  ``FLEET-DRIVER`` on the host (field ``nccl``; the job is the group);
* switch OS (``eos/show-version.json`` ``version``, ``sonic/show-version.txt``, ``nvue/nv-show-system.txt`` or the
  NVUE configuration header) -> ``FLEET-OS`` on the switch.

Each device gets an older version (one release number lowered), and no group gets so many that the skewed
version becomes its majority: the skewed devices, and only they, are the minority. Devices are distinct. The truth
is appended to ``truth.json`` (``misconfigurations``, scenario ``version-skew``) when the bundle has one, and
returned.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from unifab.collect.eos import SHOW_VERSION as EOS_SHOW_VERSION
from unifab.collect.nvue import SHOW_SYSTEM
from unifab.collect.sonic import SHOW_VERSION as SONIC_SHOW_VERSION
from unifab.model import nic_id
from unifab.parse.host import ibv_devinfo, nccl_debug
from unifab.parse.switch import nvue_system, sonic_version
from unifab.twin.version_files import write_nccl_logs

__all__ = ["SCENARIO", "apply_version_skew", "older"]

SCENARIO = "version-skew"
_SMI_DRIVER = re.compile(r"<driver_version>([^<]+)</driver_version>")
_NVUE_HEADER = re.compile(r"^(\s+version:\s*)(.+?)\s*$", re.MULTILINE)


def older(version: str, rng: random.Random) -> str:
    """``version`` with one release number lowered by 1-3: the first number after the first that is not 0
    (``28.39.1002`` -> ``28.37.1002``, ``Cumulus Linux 5.16.0`` -> ``Cumulus Linux 5.14.0``)."""
    runs = list(re.finditer(r"\d+", version))
    for m in runs[1:] + runs[:1]:
        value = int(m.group())
        if value >= 1:
            lowered = max(0, value - rng.randint(1, 3))
            digits = m.group()
            text = str(lowered).zfill(len(digits)) if digits.startswith("0") else str(lowered)
            return version[: m.start()] + text + version[m.end() :]
    raise ValueError(f"no release number to lower in {version!r}")


@dataclass(frozen=True, slots=True)
class _Candidate:
    field: str
    check: str
    kind: str
    device: str
    group: str  # what must stay a majority: the skew never reaches half of it
    apply: Callable[[random.Random], tuple[str, ...]]  # edits the file, returns the entities


def apply_version_skew(bundle_dir: Path, seed: int, count: int) -> list[dict[str, Any]]:
    """Skew ``count`` devices of the bundle (fewer when the bundle has too few to stay minorities); the truth."""
    rng = random.Random(f"version-skew:{seed}")
    candidates = _candidates(bundle_dir)
    sizes: dict[str, int] = {}
    for c in candidates:
        sizes[c.group] = sizes.get(c.group, 0) + 1
    rng.shuffle(candidates)
    used: dict[str, int] = {}
    devices: set[str] = set()
    truth: list[dict[str, Any]] = []
    for c in candidates:
        if len(truth) >= count:
            break
        if c.device in devices or used.get(c.group, 0) + 1 > (sizes[c.group] - 1) // 2:
            continue
        entities = c.apply(rng)
        used[c.group] = used.get(c.group, 0) + 1
        devices.add(c.device)
        truth.append(
            {
                "scenario": SCENARIO,
                "check": c.check,
                "subject": {"kind": c.kind, "device": c.device, "field": c.field},
                "entities": list(entities),
            }
        )
    truth.sort(key=lambda t: (t["check"], t["subject"]["device"]))
    _record(bundle_dir, truth)
    return truth


def _record(bundle_dir: Path, truth: list[dict[str, Any]]) -> None:
    path = bundle_dir / "truth.json"
    if not path.is_file():
        return
    doc = orjson.loads(path.read_bytes())
    doc.setdefault("misconfigurations", []).extend(truth)
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def _candidates(bundle_dir: Path) -> list[_Candidate]:
    out: list[_Candidate] = []
    hosts = bundle_dir / "hosts"
    for host_dir in sorted(p for p in hosts.iterdir() if p.is_dir()) if hosts.is_dir() else ():
        out += _host_candidates(host_dir)
    if hosts.is_dir():
        out += _nccl_candidates(bundle_dir, {p.name for p in hosts.iterdir() if p.is_dir()})
    switches = bundle_dir / "switches"
    for switch_dir in sorted(p for p in switches.iterdir() if p.is_dir()) if switches.is_dir() else ():
        found = _switch_candidate(switch_dir)
        if found is not None:
            out.append(found)
    return out


def _host_candidates(host_dir: Path) -> list[_Candidate]:
    host = host_dir.name
    out: list[_Candidate] = []
    ibv = host_dir / "cmd" / "ibv_devinfo.txt"
    if ibv.is_file():
        devices = ibv_devinfo.parse(ibv.read_text(), str(ibv))
        if devices and all(d.fw_ver for d in devices):
            model = ",".join(sorted({f"{d.vendor_part_id}/{d.board_id}" for d in devices}))

            def firmware(
                rng: random.Random, path: Path = ibv, devs: tuple[Any, ...] = tuple(devices)
            ) -> tuple[str, ...]:
                fw = older(str(devs[0].fw_ver), rng)
                path.write_text(ibv_devinfo.dump(tuple(replace(d, fw_ver=fw) for d in devs)))
                return tuple(nic_id(host, d.hca_id) for d in devs)

            out.append(_Candidate("nic_firmware", "FLEET-FIRMWARE", "host", host, f"fw:{model}", firmware))
    modules = host_dir / "sys" / "module"
    for driver in ("mlx5_core", "bnxt_en"):
        path = modules / driver / "version"
        if path.is_file():
            out.append(_Candidate("nic_driver", "FLEET-DRIVER", "host", host, f"drv:{driver}", _file_skew(path, host)))
    smi = host_dir / "cmd" / "nvidia-smi-q.xml"
    if smi.is_file() and _SMI_DRIVER.search(smi.read_text()):

        def gpu(rng: random.Random, path: Path = smi) -> tuple[str, ...]:
            text = path.read_text()
            current = _SMI_DRIVER.search(text)
            assert current is not None
            new = older(current.group(1), rng)
            path.write_text(_SMI_DRIVER.sub(f"<driver_version>{new}</driver_version>", text))
            return (f"host:{host}",)

        out.append(_Candidate("gpu_driver", "FLEET-DRIVER", "host", host, "gpu", gpu))
    return out


def _nccl_candidates(bundle_dir: Path, hosts: set[str]) -> list[_Candidate]:
    """One candidate per host of each job log whose ranks all print one NCCL release."""
    out: list[_Candidate] = []
    for path in write_nccl_logs(bundle_dir):
        versions = nccl_debug.scan_versions(path.read_text(), str(path))
        if len({v.release for v in versions}) != 1:
            continue
        for host in sorted({v.host for v in versions} & hosts):
            out.append(_Candidate("nccl", "FLEET-DRIVER", "host", host, f"nccl:{path.name}", _nccl_skew(path, host)))
    return out


def _nccl_skew(path: Path, host: str) -> Callable[[random.Random], tuple[str, ...]]:
    def skew(rng: random.Random) -> tuple[str, ...]:
        lines = path.read_text().split("\n")
        mine = [v for v in nccl_debug.scan_versions("\n".join(lines), str(path)) if v.host == host]
        new = older(mine[0].release, rng)
        for v in mine:
            lines[v.line - 1] = lines[v.line - 1].replace(f"NCCL version {v.release}", f"NCCL version {new}", 1)
        path.write_text("\n".join(lines))
        return (f"host:{host}",)

    return skew


def _file_skew(path: Path, host: str) -> Callable[[random.Random], tuple[str, ...]]:
    def skew(rng: random.Random) -> tuple[str, ...]:
        path.write_text(older(path.read_text().strip(), rng) + "\n")
        return (f"host:{host}",)

    return skew


def _switch_candidate(switch_dir: Path) -> _Candidate | None:
    name = switch_dir.name
    entity = (f"switch:{name}",)
    eos = switch_dir / "eos" / EOS_SHOW_VERSION
    sonic = switch_dir / "sonic" / SONIC_SHOW_VERSION
    nvue_show = switch_dir / "nvue" / SHOW_SYSTEM
    nvue_config = switch_dir / "nvue" / "config.yaml"
    if eos.is_file():

        def eos_skew(rng: random.Random) -> tuple[str, ...]:
            doc = orjson.loads(eos.read_bytes())
            doc["version"] = older(doc["version"], rng)
            eos.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
            return entity

        return _Candidate("switch_os", "FLEET-OS", "switch", name, "os:eos", eos_skew)
    if sonic.is_file():

        def sonic_skew(rng: random.Random) -> tuple[str, ...]:
            record = sonic_version.parse(sonic.read_text(), str(sonic))
            sonic.write_text(sonic_version.dump(replace(record, software_version=older(record.software_version, rng))))
            return entity

        return _Candidate("switch_os", "FLEET-OS", "switch", name, "os:sonic", sonic_skew)
    if nvue_show.is_file():

        def nvue_skew(rng: random.Random) -> tuple[str, ...]:
            record = nvue_system.parse(nvue_show.read_text(), str(nvue_show))
            nvue_show.write_text(nvue_system.dump(replace(record, build=older(record.build, rng))))
            return entity

        return _Candidate("switch_os", "FLEET-OS", "switch", name, "os:nvue", nvue_skew)
    if nvue_config.is_file() and _NVUE_HEADER.search(nvue_config.read_text()):

        def header_skew(rng: random.Random) -> tuple[str, ...]:
            text = nvue_config.read_text()
            m = _NVUE_HEADER.search(text)
            assert m is not None
            nvue_config.write_text(text[: m.start(2)] + older(m.group(2), rng) + text[m.end(2) :])
            return entity

        return _Candidate("switch_os", "FLEET-OS", "switch", name, "os:nvue", header_skew)
    return None
