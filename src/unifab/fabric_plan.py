"""Render an intent for the devices of a bundle, and preview the fabric as it will be once applied.

:func:`plan` resolves the intent per device and renders each one's configuration (``outputs``: the
files ``unifab render --out`` writes) and the bundle files the device would report afterwards
(``after``: ``mlnx_qos`` text, ``ecn/`` sysfs, ``traffic_class``, rdma_cm TOS, niccli getqos, SONiC
CONFIG_DB, EOS running-config, NVUE yaml), each made by the format's own renderer or applier.
A switch port takes the intent's switch MTU capped at its platform's maximum
(:func:`unifab.platforms.clamp_mtu`); both ends of a switch↔switch link take the lower of the two platforms'
maximums, so a SONiC↔EOS uplink of a 9216 intent runs 9214 at both ends, and the rendered output says why
(:func:`_link_mtus`).
:func:`write_tree` writes a directory atomically: everything goes to a temporary sibling that is
swapped into place in one step, so a failure (even SIGKILL) never leaves a half-written directory.
"""

from __future__ import annotations

import difflib
import errno
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from unifab import layout
from unifab.errors import ParseError, UnifabError, UsageError
from unifab.intent import Device, Intent, nccl_settings, resolve
from unifab.model import Fabric, Host, Nic, Switch
from unifab.parse.host import bnxt_qos, ethtool_pause, mlnx_qos, roce_tos, traffic_class
from unifab.parse.sched import nccl_env
from unifab.platforms import PLATFORMS, clamp_mtu
from unifab.profile import PortSpec, QosProfile
from unifab.render import eos_config, nic_bnxt, nic_mlx5, nic_plan, nvue_config, sonic_config
from unifab.render import nccl_env as nccl
from unifab.render.host_qos import render_host_script
from unifab.render.host_script import NicTarget

__all__ = [
    "OUTPUT_MARKER",
    "SWITCH_RENDERERS",
    "DevicePlan",
    "FabricPlan",
    "SwitchRenderer",
    "output_files",
    "plan",
    "switch_device",
    "write_tree",
]


@dataclass(slots=True)
class DevicePlan:
    kind: str  # "host" | "switch"
    name: str
    os: str  # "mlx5" / "bnxt" / "mixed" for hosts; "sonic" | "eos" | "nvue" for switches
    profile: QosProfile | None
    outputs: dict[str, str] = field(default_factory=dict)  # file name under DIR/{hosts,switches}/<name>/ -> text
    after: dict[str, str] = field(default_factory=dict)  # bundle-relative path -> text once applied
    diff: str = ""  # unified diff of the device's bundle files, current -> after
    error: str | None = None  # rendering failed for this device (the others still render)
    notes: list[str] = field(default_factory=list)  # why a rendered value is not the intent's (a port's MTU)


@dataclass(slots=True)
class FabricPlan:
    devices: list[DevicePlan]
    nccl_env: str
    intent_text: str  # the intent rendered from: the preview bundle's fabric.yaml
    jobs_after: dict[str, str] = field(default_factory=dict)  # scheduler/env/<job>.env relaunched with nccl.env

    def preview_files(self) -> Iterator[tuple[str, str]]:
        """Bundle-relative ``(path, text)`` of every file the devices report once applied, and the intent."""
        for d in self.devices:
            if d.error is None:
                yield from d.after.items()
        yield from self.jobs_after.items()
        yield "fabric.yaml", self.intent_text


def _driver(nic: Nic) -> str:
    return "bnxt" if nic.driver == "bnxt_en" or (nic.rdma_dev or "").startswith("bnxt") else "mlx5"


def _peers(fabric: Fabric) -> dict[tuple[str, str], tuple[str, str, float | None]]:
    """(node, port) -> (peer node, peer port, cable metres) for every link, both directions."""
    peers: dict[tuple[str, str], tuple[str, str, float | None]] = {}
    for lk in fabric.links:
        peers[(lk.a.node, lk.a.port)] = (lk.b.node, lk.b.port, lk.cable_m)
        peers[(lk.b.node, lk.b.port)] = (lk.a.node, lk.a.port, lk.cable_m)
    return peers


def _cable(
    intent: Intent,
    settings: Mapping[str, object],
    device: str,
    port: str,
    link_class: str,
    peers: Mapping[tuple[str, str], tuple[str, str, float | None]],
) -> int:
    """Per-link intent, else the plan's cable length, else the link class's length."""
    per_link = intent.per_link_cable_m(settings)
    if f"{device}:{port}" in per_link:
        return per_link[f"{device}:{port}"]
    peer = peers.get((device, port))
    if peer is not None and peer[2] is not None:
        return max(1, round(peer[2]))
    return intent.cable_m(settings, link_class)


def plan(intent: Intent, fabric: Fabric, root: Path, progress: Callable[[int], None] | None = None) -> FabricPlan:
    """Every device's rendered configuration and post-apply bundle files; ``root`` holds the current ones.

    ``progress(1)`` after each device is rendered and diffed.
    """
    peers = _peers(fabric)
    devices: list[DevicePlan] = []
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        devices.append(_guard(partial(_host, intent, host, peers, root), "host", host.name))
    for switch in sorted(fabric.switches.values(), key=lambda s: s.name):
        devices.append(_guard(partial(_switch, intent, switch, fabric, peers, root), "switch", switch.name))
    for d in devices:
        if d.error is None:
            d.diff = _diff(root, d.after)
        if progress:
            progress(1)
    env = _nccl(intent, fabric)
    return FabricPlan(devices, env, intent.text, _jobs_after(root, env))


def _jobs_after(root: Path, env_text: str) -> dict[str, str]:
    """Each job's recorded environment (``scheduler/env/<id>.env``) as it reads once the job is relaunched
    with ``jobs/nccl.env``: the rendered variables replaced, the job's own (its HCA list, ...) kept."""
    rendered = nccl_env.parse_script(env_text, "jobs/nccl.env")
    rendered.pop("NCCL_IB_HCA", None)  # a job names the NICs of its own hosts
    out: dict[str, str] = {}
    env_dir = root / layout.JOB_ENV_DIR
    for path in sorted(env_dir.glob("*.env")) if env_dir.is_dir() else []:
        rel = path.relative_to(root).as_posix()
        try:
            current = nccl_env.parse_env(path.read_text(), rel)
        except (ParseError, OSError, UnicodeDecodeError):
            continue  # an unreadable record stays as it is (the check reports it)
        merged = {**current, **rendered}
        out[rel] = "".join(f"{k}={v}\n" for k, v in merged.items())
    return out


def _guard(build: Callable[[], DevicePlan], kind: str, name: str) -> DevicePlan:
    """One device's plan; a device that cannot be rendered is reported, never stops the others."""
    try:
        return build()
    except (UnifabError, ValueError, KeyError, OSError) as exc:
        return DevicePlan(kind, name, "?", None, error=f"{kind} {name}: {exc}")


def _host(
    intent: Intent, host: Host, peers: Mapping[tuple[str, str], tuple[str, str, float | None]], root: Path
) -> DevicePlan:
    nics = [n for n in sorted(host.nics.values(), key=lambda n: n.netdev) if n.link_layer != "InfiniBand"]
    drivers = sorted({_driver(n) for n in nics})
    device = Device(host.name, "host", os=drivers[0] if len(drivers) == 1 else None)
    settings = intent.settings(device)
    profile = resolve(intent, device)
    targets = [
        NicTarget(n.netdev, n.rdma_dev, _driver(n), _cable(intent, settings, host.name, n.netdev, "host", peers))
        for n in nics
    ]
    out = DevicePlan("host", host.name, device.os or "mixed", profile)
    out.outputs["unifab-qos.sh"] = render_host_script(host.name, targets, profile)
    base = f"hosts/{host.name}"
    plan_nics = [_plan_nic(root, base, n, t) for n, t in zip(nics, targets, strict=True)]
    out.outputs["nic-plan.json"] = nic_plan.dumps(nic_plan.render_nic_plan(host.name, plan_nics, profile))
    for nic, t in zip(nics, targets, strict=True):
        out.after[f"{base}/sys/class/net/{t.netdev}/mtu"] = f"{profile.host_mtu}\n"
        pause = ethtool_pause.PauseParams(t.netdev, autoneg=False, rx=False, tx=False)
        out.after[f"{base}/cmd/ethtool-a/{t.netdev}.txt"] = ethtool_pause.dump(pause)
        if t.driver == "bnxt":
            qos_path = root / base / "cmd" / "bnxt-qos" / f"{t.netdev}.txt"
            current_qos = bnxt_qos.parse(qos_path.read_text(), str(qos_path)) if qos_path.is_file() else None
            out.after[f"{base}/cmd/bnxt-qos/{t.netdev}.txt"] = nic_bnxt.getqos(profile, current_qos)
            if t.rdma_dev:
                for rel, text in nic_bnxt.cc_files(profile).items():
                    out.after[f"{base}/sys/kernel/config/bnxt_re/{t.rdma_dev}/{rel}"] = text
        else:
            current_path = root / base / "cmd" / "mlnx_qos" / f"{t.netdev}.txt"
            current = mlnx_qos.parse(current_path.read_text(), str(current_path)) if current_path.is_file() else None
            out.after[f"{base}/cmd/mlnx_qos/{t.netdev}.txt"] = mlnx_qos.dump(
                nic_mlx5.applied(current, profile, t.cable_m)
            )
            ecn_dir = f"{base}/sys/class/net/{t.netdev}/ecn"
            if (root / ecn_dir).is_dir() or nic.pci_address is None:  # MLNX_OFED
                out.after.update(_ecn_files(ecn_dir, profile))
            else:  # the in-tree driver: DCQCN in debugfs cc_params
                out.after.update(_cc_params_files(f"{base}/sys/kernel/debug/mlx5/{nic.pci_address}/cc_params", profile))
            tc_file = f"{base}/sys/class/infiniband/{t.rdma_dev}/tc/1/traffic_class"
            if t.rdma_dev and (root / tc_file).is_file():  # the override exists only with MLNX_OFED
                tc = traffic_class.dump(traffic_class.TrafficClass(profile.nccl_ib_tc, ()))
                out.after[tc_file] = tc
        if t.rdma_dev:
            cm = roce_tos.dump_tree(roce_tos.RoceTos((roce_tos.RoceDefaults(1, profile.nccl_ib_tc, "RoCE v2"),)))
            for rel, text in cm.items():
                out.after[f"{base}/sys/kernel/config/rdma_cm/{t.rdma_dev}/{rel}"] = text
    return out


def _plan_nic(root: Path, base: str, nic: Nic, t: NicTarget) -> nic_plan.PlanNic:
    """The NIC as the plan sees it: the dialect the bundle shows (the same split as the preview files above:
    MLNX_OFED where the ``ecn/`` tree exists or the PCI address is unknown, else upstream ``dcb``)."""
    if t.driver == "bnxt":
        dialect = nic_plan.BNXT
    elif (root / base / "sys/class/net" / t.netdev / "ecn").is_dir() or nic.pci_address is None:
        dialect = nic_plan.OFED
    else:
        dialect = nic_plan.UPSTREAM
    tc_file = root / base / "sys/class/infiniband" / (t.rdma_dev or "-") / "tc/1/traffic_class"
    return nic_plan.PlanNic(
        t.netdev,
        t.rdma_dev,
        t.driver,
        dialect,
        t.cable_m,
        pci_address=nic.pci_address if dialect == nic_plan.UPSTREAM else None,
        traffic_class=dialect == nic_plan.OFED and bool(t.rdma_dev) and tc_file.is_file(),
    )


def _ecn_files(base: str, profile: QosProfile) -> dict[str, str]:
    files = {f"{base}/{point}/enable/{p}": "1\n" for point in ("roce_np", "roce_rp") for p in range(8)}
    files[f"{base}/roce_np/cnp_dscp"] = f"{profile.cnp_dscp}\n"
    files[f"{base}/roce_np/cnp_802p_prio"] = f"{profile.cnp_priority}\n"
    for name, value in profile.dcqcn.items():
        point = "roce_np" if name in nic_mlx5.NP_PARAMS else "roce_rp"
        files[f"{base}/{point}/{name}"] = f"{value}\n"
    return files


def _cc_params_files(base: str, profile: QosProfile) -> dict[str, str]:
    files = {f"{base}/np_cnp_dscp": f"{profile.cnp_dscp}\n", f"{base}/np_cnp_prio": f"{profile.cnp_priority}\n"}
    for name, value in profile.dcqcn.items():
        files[f"{base}/{nic_mlx5.CC_PARAMS[name]}"] = f"{value}\n"
    return files


def switch_device(
    switch: Switch, fabric: Fabric, peers: Mapping[tuple[str, str], tuple[str, str, float | None]]
) -> Device:
    """A switch cabled to hosts is a ``leaf``, others ``spine``; a leaf whose host ports all reach the
    same NIC position (the i-th NIC of each host, in natural name order) serves rail i."""
    rails: set[int] = set()
    for port in switch.ports:
        peer = peers.get((switch.name, port))
        host = fabric.hosts.get(peer[0]) if peer is not None else None
        if host is not None and peer is not None and peer[1] in host.nics:
            rails.add(sorted(host.nics, key=_natural).index(peer[1]))
    rail = next(iter(rails)) if len(rails) == 1 else None
    return Device(switch.name, "leaf" if rails else "spine", rail=rail, os=switch.os)


def _switch(
    intent: Intent,
    switch: Switch,
    fabric: Fabric,
    peers: Mapping[tuple[str, str], tuple[str, str, float | None]],
    root: Path,
) -> DevicePlan:
    device = switch_device(switch, fabric, peers)
    settings = intent.settings(device)
    profile = resolve(intent, device)
    ports = []
    for name in sorted(switch.ports):
        peer = peers.get((switch.name, name))
        if peer is None:
            continue  # an uncabled port carries no RoCE
        role = "host" if peer[0] in fabric.hosts else "fabric"
        port = switch.ports[name]
        cable = _cable(intent, settings, switch.name, name, role, peers)
        ports.append(PortSpec(name, port.speed_mbps or 400_000, role, cable))
    out = DevicePlan("switch", switch.name, switch.os, profile)
    renderer = SWITCH_RENDERERS.get(switch.os)
    if renderer is None:
        raise UnifabError(f"no renderer for switch OS {switch.os!r}; unifab renders {', '.join(SWITCH_RENDERERS)}")
    mtus, out.notes = _link_mtus(switch, ports, profile, fabric, peers)
    current_rel = switch.config_file
    renderer(out, switch, ports, profile, current_rel, (root / current_rel).read_text(), mtus)
    return out


def _link_mtus(
    switch: Switch,
    ports: list[PortSpec],
    profile: QosProfile,
    fabric: Fabric,
    peers: Mapping[tuple[str, str], tuple[str, str, float | None]],
) -> tuple[dict[str, int], list[str]]:
    """The MTU of each switch↔switch port whose other end's platform takes less than this switch sets, and a
    note per port saying why: the intent's switch MTU capped at both ends' platform maximum
    (:func:`~unifab.platforms.clamp_mtu` for each), so the two ends render the same MTU. Other ports keep the
    renderer's own MTU: the intent's, capped at their own platform's maximum."""
    asked = profile.switch_mtu
    own = PLATFORMS.get(switch.os)
    if own is None or isinstance(asked, bool) or not isinstance(asked, int):
        return {}, []  # no platform to cap at, or no MTU at all (the renderer refuses it by name)
    mine = clamp_mtu(own, asked)[0]
    mtus: dict[str, int] = {}
    notes: list[str] = []
    for spec in sorted(ports, key=lambda s: _natural(s.name)):
        peer = peers.get((switch.name, spec.name))
        other = fabric.switches.get(peer[0]) if peer is not None and spec.role == "fabric" else None
        theirs = PLATFORMS.get(other.os) if other is not None else None
        if peer is None or theirs is None:
            continue
        link, why = clamp_mtu(theirs, mine)
        if why is not None:
            mtus[spec.name] = link
            notes.append(f"{spec.name} faces {peer[0]} {peer[1]}, where {why}: both ends of the link are set to {link}")
    return mtus, notes


def _noted(text: str, notes: list[str], comment: str) -> str:
    """``text`` with a ``<comment> unifab: <note>`` line per note, after the renderer's own such lines."""
    if not notes:
        return text
    lines = text.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].startswith(f"{comment} unifab: "):
        head += 1
    added = [f"{comment} unifab: {n}\n" for n in notes]
    return "".join([*lines[:head], *added, *lines[head:]])


def _render_sonic(
    out: DevicePlan,
    switch: Switch,
    ports: list[PortSpec],
    profile: QosProfile,
    rel: str,
    current_text: str,
    mtus: Mapping[str, int],
) -> None:
    rendered = sonic_config.render_config_db(ports, profile, hwsku=switch.hwsku, platform=switch.platform, mtus=mtus)
    current = json.loads(current_text)
    out.outputs["config_db.json"] = json.dumps(rendered, indent=2, sort_keys=True) + "\n"
    if out.notes:  # CONFIG_DB JSON has no comments: the notes go beside it
        out.outputs["notes.txt"] = _noted("", out.notes, "#")
    out.outputs["patch.json"] = json.dumps(sonic_config.json_patch(current, rendered), indent=2) + "\n"
    after = sonic_config.apply_to_config_db(current, rendered)
    out.after[rel] = json.dumps(after, indent=2, sort_keys=True) + "\n"


def _render_eos(
    out: DevicePlan,
    switch: Switch,
    ports: list[PortSpec],
    profile: QosProfile,
    rel: str,
    current_text: str,
    mtus: Mapping[str, int],
) -> None:
    cfg = _noted(eos_config.render_eos(ports, profile, mtus=mtus), out.notes, "!")
    out.outputs["eos.cfg"] = cfg
    out.after[rel] = eos_config.apply_to_running_config(current_text, cfg)


def _render_nvue(
    out: DevicePlan,
    switch: Switch,
    ports: list[PortSpec],
    profile: QosProfile,
    rel: str,
    current_text: str,
    mtus: Mapping[str, int],
) -> None:
    commands = "".join(c + "\n" for c in nvue_config.render_nv_set(ports, profile, mtus=mtus))
    out.outputs["nv-set.txt"] = _noted(commands, out.notes, "#")
    out.after[rel] = nvue_config.render_nvue_yaml(ports, profile, current_text, mtus=mtus)


# (plan, switch, cabled ports, profile, config file, its current text, per-port MTUs of switch↔switch links)
SwitchRenderer = Callable[[DevicePlan, Switch, list[PortSpec], QosProfile, str, str, Mapping[str, int]], None]
# The intent's configuration for each platform it can render (see unifab.platforms; not InfiniBand).
SWITCH_RENDERERS: dict[str, SwitchRenderer] = {"sonic": _render_sonic, "eos": _render_eos, "nvue": _render_nvue}


def _nccl(intent: Intent, fabric: Fabric) -> str:
    profile = intent.base_profile()
    extra = nccl_settings(intent.base)
    hosts = sorted(fabric.hosts.values(), key=lambda h: h.name)
    nics = sorted(hosts[0].nics.values(), key=lambda n: n.netdev) if hosts else []
    hcas = sorted({n.rdma_dev for h in hosts for n in h.nics.values() if n.rdma_dev}, key=_natural)
    infiniband = bool(nics) and all(n.link_layer == "InfiniBand" for n in nics)
    gid = extra.get("gid_index")
    if gid is None and nics:
        gid = nccl.gid_index(nics[0].gids)
    return nccl.render(profile, hcas, gid=gid, sl=extra.get("sl"), infiniband=infiniband)


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    tail = name[len(head) :]
    return (head, int(tail) if tail else -1)


def _diff(root: Path, after: Mapping[str, str]) -> str:
    """What changes, as a unified diff. JSON documents (CONFIG_DB) are compared table by table in one
    layout (sorted keys, indent 2): a file written differently shows only the values that change, and
    the comparison stays quick on large databases."""
    chunks: list[str] = []
    for rel in sorted(after):
        path = root / rel
        old = path.read_text() if path.is_file() else ""
        if old == after[rel]:
            continue
        if rel.endswith(".json") and old:
            try:
                chunks += _json_diff(rel, json.loads(old), json.loads(after[rel]))
                continue
            except ValueError:
                pass  # not JSON after all: compared as written
        chunks += _text_diff(old, after[rel], f"a/{rel}", f"b/{rel}")
    return "".join(c if c.endswith("\n") else c + "\n" for c in chunks)


def _text_diff(old: str, new: str, a: str, b: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), a, b))


def _json_diff(rel: str, old: object, new: object) -> list[str]:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return _text_diff(_dump(old), _dump(new), f"a/{rel}", f"b/{rel}")
    out: list[str] = []
    for table in sorted(set(old) | set(new)):
        was, now = old.get(table), new.get(table)
        if was == now:
            continue
        if not isinstance(was, dict) or not isinstance(now, dict):
            out += _text_diff(
                _dump(was) if was is not None else "",
                _dump(now) if now is not None else "",
                f"a/{rel} {table}",
                f"b/{rel} {table}",
            )
            continue
        for key in sorted(set(was) | set(now)):  # one entry at a time: CONFIG_DB keys are small
            if was.get(key) != now.get(key):
                label = f"{rel} {table}|{key}"
                before = _dump(was[key]) if key in was else ""
                after = _dump(now[key]) if key in now else ""
                out += _text_diff(before, after, f"a/{label}", f"b/{label}")
    return out


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


# --- writing ------------------------------------------------------------------------------------------


def output_files(fp: FabricPlan) -> Iterator[tuple[str, str]]:
    """``(path under DIR, text)`` of ``unifab render --out DIR``."""
    for d in fp.devices:
        if d.error is not None:
            continue
        folder = {"host": "hosts", "switch": "switches"}[d.kind]
        for name, text in d.outputs.items():
            yield f"{folder}/{d.name}/{name}", text
        if d.diff:
            yield f"{folder}/{d.name}/changes.diff", d.diff
    yield "jobs/nccl.env", fp.nccl_env


OUTPUT_MARKER = ".unifab-output"  # in every directory write_tree made: only those may be replaced


def write_tree(target: Path, files: Iterator[tuple[str, str]], copy_from: Path | None = None) -> None:
    """Write ``files`` (over a copy of ``copy_from``) as directory ``target``, atomically.

    ``target`` may be new, empty, or an earlier output of this function (it holds :data:`OUTPUT_MARKER`);
    anything else — a bundle, someone's files — is refused with a :class:`UsageError`, never deleted, and so is
    the current directory or a directory holding it. The preview of a bundle may not be written into, over or
    above that bundle.

    Everything is written into a staging directory beside ``target`` and then swapped in with one
    ``renameat2(RENAME_EXCHANGE)`` where the kernel has it (Linux), so a process killed at any moment (even
    SIGKILL) leaves ``target`` either as it was or complete, never a mix, never missing; elsewhere the old
    directory is renamed aside and the new one renamed in, a window of two renames.
    """
    target = target.resolve()
    cwd = Path.cwd().resolve()
    if target == cwd or target in cwd.parents:
        raise UsageError(f"{target} is the current directory or holds it: give a new directory for the output")
    if target.exists():
        if not target.is_dir():
            raise UsageError(f"{target} exists and is not a directory")
        if any(target.iterdir()) and not (target / OUTPUT_MARKER).is_file():
            raise UsageError(
                f"{target} is not empty and was not written by unifab render: give a new directory "
                "(unifab replaces only its own earlier output)"
            )
    if copy_from is not None:
        source = copy_from.resolve()
        if target == source or source in target.parents or target in source.parents:
            raise UsageError(f"the preview {target} would overwrite the bundle {source}: give a directory beside it")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        stage = tmp / "tree"
        if copy_from is not None:
            shutil.copytree(copy_from, stage, symlinks=True)
        else:
            stage.mkdir()
        for rel, text in files:
            path = stage / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if rel.endswith(".sh"):
                path.chmod(0o755)
        (stage / OUTPUT_MARKER).write_text("written by unifab render; unifab may replace this directory\n")
        _swap_in(stage, target, tmp / "old")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where the system
    cannot (no such call, or a filesystem without it), so the caller falls back to two renames."""
    import ctypes
    import ctypes.util
    import os

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(stage: Path, target: Path, old: Path) -> None:
    """``stage`` becomes ``target``; an earlier ``target`` ends at ``stage`` (exchanged) or ``old`` (renamed)."""
    if not target.exists():
        stage.rename(target)
    elif not _exchange(stage, target):
        target.rename(old)
        stage.rename(target)
