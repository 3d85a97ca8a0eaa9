"""The incremental session must give exactly what a full load + check of the changed bundle gives.

Property test: many random single-device changes (NIC QoS, MTU, speed, TOS override, pause, LLDP
cabling, unreadable and deleted files, DCBX mode, GID types, NIC firmware, NIC and GPU driver versions;
switch port MTU/speed/FEC/PFC, DSCP maps, WRED thresholds, unreadable configs, the OS version; a job's
NCCL environment) on twins with every scenario, SONiC and mixed EOS/NVUE switches. After each change the
session's findings must equal a fresh ``run_checks(load_bundle(...))``; after the file is restored they
must equal the original findings again. Every registered check has an explicit scope, and a host-only
change re-runs no check over the whole fabric.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from unifab.checks.registry import registry
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import BundleError
from unifab.model import Finding
from unifab.session.incremental import Session, Update, diff_findings, finding_key
from unifab.session.scope import KEYS, SCOPES, Scope
from unifab.twin.generate import generate
from unifab.twin.scenarios import SCENARIOS


@dataclass
class Edit:
    what: str
    kind: str  # "host" | "switch" | "bundle" (a path outside hosts/ and switches/: the scheduler's)
    device: str
    saved: dict[Path, bytes | None]

    def restore(self) -> None:
        for path, data in self.saved.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(data)


def _save(*paths: Path) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


Mutator = Callable[[random.Random, Path], Edit | None]


def _pick(rng: random.Random, paths: list[Path]) -> Path | None:
    return rng.choice(sorted(paths)) if paths else None


def _host(rng: random.Random, bundle: Path) -> Path:
    return rng.choice(sorted((bundle / "hosts").iterdir()))


def _sub(
    rng: random.Random, bundle: Path, what: str, glob: str, pattern: str, repl: Callable[[str], str]
) -> Edit | None:
    host = _host(rng, bundle)
    path = _pick(rng, list(host.glob(glob)))
    if path is None:
        return None
    saved = _save(path)
    text = path.read_text()
    matches = list(re.finditer(pattern, text, flags=re.M))
    if not matches:
        return None
    m = rng.choice(matches)
    path.write_text(text[: m.start()] + repl(m.group(0)) + text[m.end() :])
    return Edit(f"{what} {path.relative_to(bundle)}", "host", host.name, saved)


def host_pfc(rng: random.Random, bundle: Path) -> Edit | None:
    def flip(line: str) -> str:
        head, flags = line.split("enabled", 1)
        values = flags.split()
        i = rng.randrange(len(values))
        values[i] = "0" if values[i] == "1" else "1"
        return head + "enabled" + "".join(f"{v:>4}" for v in values)

    return _sub(rng, bundle, "PFC flags", "cmd/mlnx_qos/*.txt", r"^\s*enabled(?:\s+[01])+", flip)


def host_trust(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "trust", "cmd/mlnx_qos/*.txt", r"trust state: \w+", lambda s: "trust state: pcp")


def host_cable(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "cable len", "cmd/mlnx_qos/*.txt", r"Cable len: \d+", lambda s: "Cable len: 7")


def host_mtu(rng: random.Random, bundle: Path) -> Edit | None:
    new = rng.choice(["1500", "4200", "9000"])
    return _sub(rng, bundle, "MTU", "sys/class/net/*/mtu", r"^\d+", lambda s: new)


def host_rate(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "rate", "sys/class/infiniband/*/ports/1/rate", r"^.*$", lambda s: "200 Gb/sec (4X HDR)")


def host_tclass(rng: random.Random, bundle: Path) -> Edit | None:
    host = _host(rng, bundle)
    path = _pick(rng, list(host.glob("sys/class/infiniband/*/tc/1/traffic_class")))
    if path is None:
        return None
    saved = _save(path)
    path.write_text(f"Global tclass={rng.choice([98, 106, 0])}\n")
    return Edit(f"tclass {path.relative_to(bundle)}", "host", host.name, saved)


def host_pause(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "global pause", "cmd/ethtool-a/*.txt", r"^RX:\s+off", lambda s: "RX:\t\ton")


def host_dcqcn(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "roce_np", "sys/class/net/*/ecn/roce_np/enable/3", r"^\d", lambda s: "0")


def host_lldp(rng: random.Random, bundle: Path) -> Edit | None:
    """Two of the host's NICs report each other's switch port: a swap the cabling checks must group."""
    host = _host(rng, bundle)
    path = host / "cmd" / "lldpcli.json"
    if not path.is_file():
        return None
    saved = _save(path)
    data = json.loads(path.read_text())
    ifaces = data["lldp"][0]["interface"] if isinstance(data.get("lldp"), list) else None
    if not ifaces or len(ifaces) < 2:
        return None
    i, j = rng.sample(range(len(ifaces)), 2)
    ifaces[i]["port"], ifaces[j]["port"] = ifaces[j]["port"], ifaces[i]["port"]
    ifaces[i]["chassis"], ifaces[j]["chassis"] = ifaces[j]["chassis"], ifaces[i]["chassis"]
    path.write_text(json.dumps(data, indent=2))
    return Edit(f"LLDP swap {path.relative_to(bundle)}", "host", host.name, saved)


def host_corrupt(rng: random.Random, bundle: Path) -> Edit | None:
    host = _host(rng, bundle)
    path = _pick(rng, [*host.glob("cmd/mlnx_qos/*.txt"), host / "cmd" / "lldpcli.json"])
    if path is None or not path.is_file():
        return None
    saved = _save(path)
    path.write_text("garbage\x01 not what the parser expects {\n")
    return Edit(f"corrupt {path.relative_to(bundle)}", "host", host.name, saved)


def host_delete(rng: random.Random, bundle: Path) -> Edit | None:
    host = _host(rng, bundle)
    path = _pick(rng, list(host.glob("cmd/mlnx_qos/*.txt")) + list(host.glob("sys/class/net/*/mtu")))
    if path is None:
        return None
    saved = _save(path)
    path.unlink()
    return Edit(f"delete {path.relative_to(bundle)}", "host", host.name, saved)


def _config_db(rng: random.Random, bundle: Path) -> Path | None:
    return _pick(rng, list((bundle / "switches").glob("*/sonic/config_db.json")))


def _switch_json(
    rng: random.Random, bundle: Path, what: str, edit: Callable[[dict[str, dict[str, dict[str, str]]]], bool]
) -> Edit | None:
    path = _config_db(rng, bundle)
    if path is None:
        return None
    db = json.loads(path.read_text())
    if not edit(db):
        return None
    saved = _save(path)
    path.write_text(json.dumps(db, indent=2))
    return Edit(f"{what} {path.relative_to(bundle)}", "switch", path.parent.parent.name, saved)


def _port_field(field: str, values: list[str]) -> Mutator:
    def mutate(rng: random.Random, bundle: Path) -> Edit | None:
        def edit(db: dict[str, dict[str, dict[str, str]]]) -> bool:
            ports = sorted(db.get("PORT", {}))
            if not ports:
                return False
            db["PORT"][rng.choice(ports)][field] = rng.choice(values)
            return True

        return _switch_json(rng, bundle, f"PORT.{field}", edit)

    return mutate


def switch_pfc(rng: random.Random, bundle: Path) -> Edit | None:
    def edit(db: dict[str, dict[str, dict[str, str]]]) -> bool:
        ports = sorted(db.get("PORT_QOS_MAP", {}))
        if not ports:
            return False
        db["PORT_QOS_MAP"][rng.choice(ports)]["pfc_enable"] = rng.choice(["3,4", "", "4"])
        return True

    return _switch_json(rng, bundle, "pfc_enable", edit)


def switch_dscp_map(rng: random.Random, bundle: Path) -> Edit | None:
    def edit(db: dict[str, dict[str, dict[str, str]]]) -> bool:
        maps = db.get("DSCP_TO_TC_MAP", {})
        if not maps:
            return False
        name = rng.choice(sorted(maps))
        maps[name][rng.choice(["26", "48"])] = rng.choice(["0", "4"])
        return True

    return _switch_json(rng, bundle, "DSCP_TO_TC_MAP", edit)


def switch_wred(rng: random.Random, bundle: Path) -> Edit | None:
    def edit(db: dict[str, dict[str, dict[str, str]]]) -> bool:
        profiles = db.get("WRED_PROFILE", {})
        if not profiles:
            return False
        profile = profiles[rng.choice(sorted(profiles))]
        profile["green_min_threshold"] = profile.get("green_max_threshold", "0")
        return True

    return _switch_json(rng, bundle, "WRED_PROFILE", edit)


def switch_corrupt(rng: random.Random, bundle: Path) -> Edit | None:
    path = _pick(rng, [p for p in (bundle / "switches").glob("*/*/*") if p.is_file()])
    if path is None:
        return None
    saved = _save(path)
    path.write_text("{ not json\n")
    return Edit(f"corrupt {path.relative_to(bundle)}", "switch", path.parent.parent.name, saved)


def switch_text_mtu(rng: random.Random, bundle: Path) -> Edit | None:
    """EOS / NVUE configuration text: one port's MTU."""
    files = [p for p in (bundle / "switches").glob("*/*/*") if p.suffix in (".txt", ".yaml") and "mtu" in p.read_text()]
    path = _pick(rng, files)
    if path is None:
        return None
    text = path.read_text()
    matches = list(re.finditer(r"mtu:? \d+", text))
    m = rng.choice(matches)
    saved = _save(path)
    path.write_text(text[: m.start()] + m.group(0).rsplit(" ", 1)[0] + " 1500" + text[m.end() :])
    return Edit(f"MTU {path.relative_to(bundle)}", "switch", path.parent.parent.name, saved)


def host_firmware(rng: random.Random, bundle: Path) -> Edit | None:
    """One NIC on other firmware than its group: FLEET-FIRMWARE compares it with the group's majority."""
    version = rng.choice(["28.36.1010", "28.41.1000"])
    return _sub(
        rng, bundle, "NIC firmware", "cmd/ibv_devinfo.txt", r"fw_ver:\s+\S+", lambda s: f"fw_ver:\t\t\t\t{version}"
    )


def host_driver(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(rng, bundle, "NIC driver", "sys/module/*/version", r"^\S+", lambda s: "23.10-0.5.5")


def host_gpu_driver(rng: random.Random, bundle: Path) -> Edit | None:
    return _sub(
        rng,
        bundle,
        "GPU driver",
        "cmd/nvidia-smi-q.xml",
        r"<driver_version>[^<]*</driver_version>",
        lambda s: "<driver_version>550.54.15</driver_version>",
    )


def host_dcbx(rng: random.Random, bundle: Path) -> Edit | None:
    """Flip a NIC's DCBX owner: QOS-DCBX judges every NIC against the NICs' majority (without an intent)."""

    def flip(line: str) -> str:
        return "DCBX mode: OS controlled" if "Firmware" in line else "DCBX mode: Firmware controlled"

    return _sub(rng, bundle, "DCBX", "cmd/mlnx_qos/*.txt", r"DCBX mode: \w+ controlled", flip)


def host_gid(rng: random.Random, bundle: Path) -> Edit | None:
    """The RoCE v2 GID at the index the jobs set (NCCL_IB_GID_INDEX=3 in the twin) turns v1: HOST-GID reads it.
    (Another v2 GID, such as the IPv6 link-local one at index 1, changes nothing: no mutation is wasted on it.)"""
    return _sub(rng, bundle, "GID type", "cmd/show_gids.txt", r"^\S+\t\d+\t3\t.*\bv2(?=\t)", lambda s: s[:-2] + "v1")


def switch_version(rng: random.Random, bundle: Path) -> Edit | None:
    """A SONiC switch on another image: FLEET-OS compares it with its OS and platform group."""
    path = _pick(rng, list((bundle / "switches").glob("*/sonic/show-version.txt")))
    if path is None:
        return None
    saved = _save(path)
    text = path.read_text()
    path.write_text(re.sub(r"SONiC Software Version: \S+", "SONiC Software Version: SONiC.202311.99-abc", text))
    return Edit(f"OS version {path.relative_to(bundle)}", "switch", path.parent.parent.name, saved)


def job_env(rng: random.Random, bundle: Path) -> Edit | None:
    """A job's NCCL environment changes (HOST-GID reads NCCL_IB_GID_INDEX, QOS-JOB-TC NCCL_IB_TC): a path
    outside hosts/ and switches/, so the session re-reads the bundle."""
    path = _pick(rng, list((bundle / "scheduler").glob("env/*.env")))
    if path is None:
        return None
    saved = _save(path)
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith(("NCCL_IB_GID_INDEX=", "NCCL_IB_TC="))]
    lines.append(rng.choice(["NCCL_IB_GID_INDEX=0", "NCCL_IB_GID_INDEX=1", "NCCL_IB_TC=98"]))
    path.write_text("\n".join(lines) + "\n")
    return Edit(f"job env {path.relative_to(bundle)}", "bundle", "", saved)


MUTATORS: list[Mutator] = [
    host_pfc,
    host_trust,
    host_cable,
    host_mtu,
    host_rate,
    host_tclass,
    host_pause,
    host_dcqcn,
    host_lldp,
    host_corrupt,
    host_delete,
    _port_field("mtu", ["1500", "9100", "4200"]),
    _port_field("speed", ["100000", "200000", "400000"]),
    _port_field("fec", ["none", "fc", "rs"]),
    switch_pfc,
    switch_dscp_map,
    switch_wred,
    switch_corrupt,
    switch_text_mtu,
    host_firmware,
    host_driver,
    host_gpu_driver,
    host_dcbx,
    host_gid,
    switch_version,
    job_env,
]
# the changes that move what the keyed checks compare fabric-wide (versions, DCBX) or the jobs' environment
FLEET_AND_JOBS: list[Mutator] = [
    host_firmware,
    host_driver,
    host_gpu_driver,
    host_dcbx,
    host_gid,
    switch_version,
    job_env,
]


def full(bundle: Path) -> list[Finding]:
    return run_checks(load_bundle(bundle))


def keys(findings: list[Finding]) -> list[bytes]:
    return [finding_key(f) for f in findings]


def apply(session: Session, edit: Edit) -> object:
    if edit.kind == "bundle":
        return session.update_paths(list(edit.saved))
    return session.update_host(edit.device) if edit.kind == "host" else session.update_switch(edit.device)


def undo(session: Session, edit: Edit, bundle: Path) -> list[Finding]:
    if edit.kind == "bundle":
        return session.update_paths([p.relative_to(bundle) for p in edit.saved]).findings
    return session.update_paths([Path("hosts" if edit.kind == "host" else "switches") / edit.device / "x"]).findings


@pytest.fixture(scope="module", params=["sonic", "mixed", "sonic-majority"])
def bundle(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twins with every scenario: SONiC, mixed EOS/NVUE/SONiC, and SONiC without fabric.yaml (so the
    baseline is the devices' majority, kept as counters, rather than the intent's values)."""
    out = tmp_path_factory.mktemp(f"inc-{request.param}") / "bundle"
    generate(out, gpus=64, seed=11, scenarios=tuple(SCENARIOS), switch_os=request.param.removesuffix("-majority"))
    if request.param.endswith("-majority"):
        (out / "fabric.yaml").unlink(missing_ok=True)
    return out


def test_session_starts_equal_to_a_full_check(bundle: Path) -> None:
    assert keys(Session(bundle).findings) == keys(full(bundle))


def test_random_single_device_changes_equal_a_full_check(bundle: Path) -> None:
    rng = random.Random(20261130)
    session = Session(bundle)
    original = keys(session.findings)
    done: dict[str, int] = {}
    modes: set[str] = set()
    attempts = 0
    while sum(done.values()) < 24 and attempts < 200:
        attempts += 1
        mutate = rng.choice(MUTATORS)
        edit = mutate(rng, bundle)
        if edit is None:
            continue
        previous = session.findings
        try:
            update = apply(session, edit)
            expected = full(bundle)
        finally:
            edit.restore()
        assert isinstance(update, Update)
        assert keys(update.findings) == keys(expected), edit.what
        added, removed = diff_findings(previous, expected)
        assert sorted(keys(update.added)) == sorted(keys(added)), edit.what
        assert sorted(keys(update.removed)) == sorted(keys(removed)), edit.what
        assert keys(undo(session, edit, bundle)) == original, f"after restoring: {edit.what}"
        done[mutate.__name__] = done.get(mutate.__name__, 0) + 1
        modes.add(update.mode)
    assert sum(done.values()) >= 24, done
    assert "incremental" in modes


@pytest.mark.parametrize("mutate", FLEET_AND_JOBS, ids=lambda m: m.__name__)
def test_version_dcbx_gid_and_job_env_changes_equal_a_full_check(bundle: Path, mutate: Mutator) -> None:
    """The keyed checks (FLEET-*, QOS-DCBX) and HOST-GID follow changes to what they compare across the fleet."""
    rng = random.Random(f"{mutate.__name__}-{bundle.parent.name}")
    session = Session(bundle)
    original = keys(session.findings)
    changed = 0
    for _ in range(3):
        edit = mutate(rng, bundle)
        if edit is None:
            continue
        try:
            update = apply(session, edit)
            expected = full(bundle)
        finally:
            edit.restore()
        assert isinstance(update, Update)
        assert keys(update.findings) == keys(expected), edit.what
        changed += keys(expected) != original
        assert keys(undo(session, edit, bundle)) == original, f"after restoring: {edit.what}"
    if mutate is not switch_version or any((bundle / "switches").glob("*/sonic/show-version.txt")):
        assert changed, f"{mutate.__name__} never changed a finding: the mutation tests nothing"


def test_every_registered_check_has_an_explicit_scope() -> None:
    """No check falls back to FABRIC (re-run in full on every change) for want of an entry."""
    runnable = {k for k, s in registry().items() if s.run is not None}
    assert sorted(runnable - set(SCOPES)) == []
    assert sorted(set(SCOPES) - runnable) == []
    assert [k for k, scope in SCOPES.items() if scope is Scope.FABRIC] == []
    assert sorted(k for k, scope in SCOPES.items() if scope is Scope.KEYED and k not in KEYS) == []
    assert sorted(set(KEYS) - runnable) == []


def test_a_host_only_change_re_runs_no_check_whole(bundle: Path, tmp_path: Path) -> None:
    """One NIC's MTU on one host moves per-link and per-host findings only: nothing is re-run fabric-wide,
    while a firmware change re-runs exactly the check that compares firmware across the fleet."""
    work = tmp_path / "b"
    shutil.copytree(bundle, work)
    session = Session(work)
    host = sorted((work / "hosts").iterdir())[1]
    mtu = sorted(host.glob("sys/class/net/*/mtu"))[0]
    mtu.write_text("4200\n")
    update = session.update_host(host.name)
    assert update.mode == "incremental"
    assert session.last_whole == ()
    assert keys(update.findings) == keys(full(work))
    devinfo = host / "cmd" / "ibv_devinfo.txt"
    text = devinfo.read_text()
    devinfo.write_text(re.sub(r"fw_ver:\s+\S+", "fw_ver:\t\t\t\t28.36.1010", text, count=1))
    update = session.update_host(host.name)
    assert update.mode == "incremental"
    assert session.last_whole == ("FLEET-FIRMWARE",)
    assert any(f.check == "FLEET-FIRMWARE" and f.subject["device"] == host.name for f in update.added)
    assert keys(update.findings) == keys(full(work))
    assert session.whole_runs == {"FLEET-FIRMWARE": 1}


def test_the_diff_names_what_changed(bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "b"
    shutil.copytree(bundle, work)
    session = Session(work)
    before = session.findings
    host = sorted((work / "hosts").iterdir())[0]
    path = sorted((host / "cmd" / "mlnx_qos").glob("*.txt"))[0]
    text = path.read_text()
    path.write_text(text.replace("trust state: dscp", "trust state: pcp"))
    update = session.update_paths([path])
    assert update.mode == "incremental"
    assert update.devices == [f"host:{host.name}"]
    assert any(f.check == "QOS-TRUST" and f.subject["a"] == f"{host.name}:{path.stem}" for f in update.added)
    added, removed = diff_findings(before, update.findings)
    assert sorted(map(finding_key, added)) == sorted(map(finding_key, update.added))
    assert sorted(map(finding_key, removed)) == sorted(map(finding_key, update.removed))
    path.write_text(text)
    back = session.update_host(host.name)
    assert sorted(map(finding_key, back.removed)) == sorted(map(finding_key, update.added))


def test_a_plan_change_re_reads_the_bundle(bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "b"
    shutil.copytree(bundle, work)
    session = Session(work)
    plan = work / "plan" / "cabling.csv"
    lines = plan.read_text().splitlines(keepends=True)
    plan.write_text("".join(lines[:1] + lines[2:]))
    update = session.update_paths([plan])
    assert update.mode == "reload"
    assert keys(update.findings) == keys(full(work))


def test_a_removed_and_a_new_host_equal_a_full_check(bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "b"
    shutil.copytree(bundle, work)
    session = Session(work)
    host = sorted((work / "hosts").iterdir())[-1]
    moved = tmp_path / "moved"
    host.rename(moved)
    assert keys(session.update_host(host.name).findings) == keys(full(work))
    moved.rename(host)
    assert keys(session.update_host(host.name).findings) == keys(full(work))


def test_not_a_bundle_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="not a bundle"):
        Session(tmp_path)


def test_nccl_releases_from_the_logs_survive_a_host_update(tmp_path: Path) -> None:
    """FLEET-DRIVER judges each host's NCCL release from ``telemetry/nccl/``, outside the host's directory: a
    re-read host keeps its release, and a host that comes back gets its own from the logs again."""
    work = tmp_path / "b"
    generate(work, gpus=64, seed=5, version_skew=6)
    assert any((work / "telemetry" / "nccl").glob("*.log"))
    session = Session(work)
    assert keys(session.findings) == keys(full(work))
    skewed = [
        f.subject["device"] for f in session.findings if f.check == "FLEET-DRIVER" and "nccl" in f.message.lower()
    ]
    named = [h for h in session.fabric.hosts.values() if h.nccl_versions]
    assert named, "the twin's logs name hosts"
    host = (skewed or [named[0].name])[0]
    mtu = sorted((work / "hosts" / host).glob("sys/class/net/*/mtu"))[0]
    mtu.write_text("4200\n")
    update = session.update_host(host)
    assert session.fabric.hosts[host].nccl_versions
    assert keys(update.findings) == keys(full(work))
    moved = tmp_path / "away"
    shutil.move(work / "hosts" / host, moved)
    assert keys(session.update_host(host).findings) == keys(full(work))
    shutil.move(moved, work / "hosts" / host)
    assert keys(session.update_host(host).findings) == keys(full(work))
    assert session.fabric.hosts[host].nccl_versions
