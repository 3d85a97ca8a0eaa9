"""The switch version files the twin's platform writers do not write: SONiC ``show version`` and NVUE
``nv show system``, one uniform release per OS (the EOS writer already writes ``show-version.json``; hosts carry
their versions in ``ibv_devinfo``, ``sys/module/<driver>/version`` and ``nvidia-smi -q``); and, for the
version-skew scenario, the jobs' ``NCCL_DEBUG=INFO`` logs that say which NCCL release their ranks loaded
(:func:`write_nccl_logs`).

Run over a written bundle (:func:`write_version_files`), so it needs nothing of the generator but the files: the
SONiC platform and HwSKU come from each CONFIG_DB's ``DEVICE_METADATA|localhost``, the NVUE release from the
configuration header.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from unifab import layout
from unifab.collect.nvue import SHOW_SYSTEM
from unifab.collect.problems import Problems
from unifab.collect.scheduler import load_jobs
from unifab.collect.sonic import SHOW_VERSION
from unifab.errors import load_yaml
from unifab.parse.switch import nvue_system, sonic_version
from unifab.sources import as_source_path
from unifab.twin.files import write_text

__all__ = [
    "NCCL_BUILD",
    "NCCL_RELEASE",
    "SONIC_DISTRIBUTION",
    "SONIC_KERNEL",
    "SONIC_VERSION",
    "nccl_log",
    "write_nccl_logs",
    "write_version_files",
]

SONIC_VERSION = "SONiC.202405.1033627-fecd4ec81"  # the twin's SONiC image (SYSTEM_DESCR says SONiC.202405)
SONIC_DISTRIBUTION = "Debian 12.5"
SONIC_KERNEL = "6.1.0-11-2-amd64"
NCCL_RELEASE = "2.21.5"  # the twin's jobs' NCCL (built for the CUDA 12.x their driver runs)
NCCL_BUILD = "cuda12.2"


def write_version_files(bundle: Path) -> list[Path]:
    """Write ``sonic/show-version.txt`` and ``nvue/nv-show-system.txt`` for every switch of ``bundle`` that has
    that OS's configuration and not yet the file; the paths written."""
    written: list[Path] = []
    switches = bundle / "switches"
    for switch_dir in sorted(p for p in switches.iterdir() if p.is_dir()) if switches.is_dir() else ():
        config_db = switch_dir / "sonic" / "config_db.json"
        if config_db.is_file() and not (config_db.parent / SHOW_VERSION).exists():
            meta = orjson.loads(config_db.read_bytes()).get("DEVICE_METADATA", {}).get("localhost", {})
            record = sonic_version.SonicVersion(
                software_version=SONIC_VERSION,
                distribution=SONIC_DISTRIBUTION,
                kernel=SONIC_KERNEL,
                build_commit=SONIC_VERSION.rsplit("-", 1)[-1],
                platform=meta.get("platform"),
                hwsku=meta.get("hwsku"),
                asic="mellanox"
                if "mlnx" in str(meta.get("platform", "")) or "nvidia" in str(meta.get("platform", ""))
                else None,
                asic_count=1,
            )
            write_text(config_db.parent / SHOW_VERSION, sonic_version.dump(record))
            written.append(config_db.parent / SHOW_VERSION)
        nvue_config = switch_dir / "nvue" / "config.yaml"
        if nvue_config.is_file() and not (nvue_config.parent / SHOW_SYSTEM).exists():
            doc = load_yaml(nvue_config.read_text(encoding="utf-8"), str(nvue_config))
            header: dict[str, object] = next(
                (item["header"] for item in doc or () if isinstance(item, dict) and "header" in item), {}
            )
            build = header.get("version")
            if isinstance(build, str) and build:
                text = nvue_system.dump(
                    nvue_system.NvueSystem(build=build, hostname=switch_dir.name, timezone="Etc/UTC")
                )
                write_text(nvue_config.parent / SHOW_SYSTEM, text)
                written.append(nvue_config.parent / SHOW_SYSTEM)
    return written


def nccl_log(hosts: list[str], release: str = NCCL_RELEASE) -> str:
    """The start of a job's ``NCCL_DEBUG=INFO`` log: per host, local rank 0's bootstrap, driver and version lines
    as NCCL 2.2x prints them (``<host>:<pid>:<tid> [<dev>] NCCL INFO ...``)."""
    lines = []
    for i, host in enumerate(hosts):
        pid = 41000 + 17 * i
        prefix = f"{host}:{pid}:{pid} [0] NCCL INFO"
        lines += [
            f"{prefix} Bootstrap : Using bond0:10.1.{i // 250}.{i % 250 + 1}<0>",
            f"{prefix} cudaDriverVersion 12020",
            f"{prefix} NCCL version {release}+{NCCL_BUILD}",
        ]
    return "\n".join(lines) + "\n"


def write_nccl_logs(bundle: Path) -> list[Path]:
    """``telemetry/nccl/<job id>.log`` for every running job of the bundle's scheduler files that has none yet;
    every ``.log`` under ``telemetry/nccl/`` afterwards, sorted."""
    root = as_source_path(bundle)
    jobs = load_jobs(root / layout.SCHEDULER, Problems(root)) if (bundle / layout.SCHEDULER).is_dir() else {}
    logs = bundle / layout.NCCL_LOG_DIR
    for job_id, job in sorted(jobs.items()):
        path = logs / f"{job_id.rsplit(':', 1)[-1].replace('/', '_')}{layout.LOG_SUFFIX}"
        if job.hosts and not path.exists():
            write_text(path, nccl_log(list(job.hosts)))
    return sorted(logs.glob(f"*{layout.LOG_SUFFIX}")) if logs.is_dir() else []
