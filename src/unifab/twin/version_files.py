"""The switch version files the twin's platform writers do not write: SONiC ``show version`` and NVUE
``nv show system``, one uniform release per OS (the EOS writer already writes ``show-version.json``; hosts carry
their versions in ``ibv_devinfo``, ``sys/module/<driver>/version`` and ``nvidia-smi -q``).

Run over a written bundle (:func:`write_version_files`), so it needs nothing of the generator but the files: the
SONiC platform and HwSKU come from each CONFIG_DB's ``DEVICE_METADATA|localhost``, the NVUE release from the
configuration header.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from unifab.collect.nvue import SHOW_SYSTEM
from unifab.collect.sonic import SHOW_VERSION
from unifab.errors import load_yaml
from unifab.parse.switch import nvue_system, sonic_version
from unifab.twin.files import write_text

__all__ = ["SONIC_DISTRIBUTION", "SONIC_KERNEL", "SONIC_VERSION", "write_version_files"]

SONIC_VERSION = "SONiC.202405.1033627-fecd4ec81"  # the twin's SONiC image (SYSTEM_DESCR says SONiC.202405)
SONIC_DISTRIBUTION = "Debian 12.5"
SONIC_KERNEL = "6.1.0-11-2-amd64"


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
