"""More twin faults: dead devices, an optic whose DOM alarms, GPU Xids, NCCL errors from a bad link (and their noise).

Used by :mod:`unifab.twin.faults`, which holds the counter timelines. Each fault writes what the real thing leaves
behind, in the formats unifab reads:

* ``leaf-down``: the leaf's series stop; every far end sees its link go down (``node_network_up`` 0 and one carrier
  change on the hosts, ``unifab_port_oper_up`` 0 and one link-down on the spines);
* ``host-down``: the host's series stop; the leaf ports facing it go down;
* ``nic-down``: one NIC's series stop (its netdev and RDMA device are gone) while the host reports; its leaf port
  goes down;
* ``optic-dom``: a host NIC receives rising uncorrected errors, and its module's ``ethtool -m`` shows a lane's rx
  power under the module's low alarm level with the alarm flags on;
* ``gpu-xid-79`` / ``-48`` / ``-94``: the Xid in the host's kernel log (``telemetry/kernel/<host>.log``,
  ``journalctl -k -o short-iso`` lines);
* ``nccl-bad-link``: NCCL completion errors (status 12, retries exhausted) between one NIC and several peers, from
  both sides (``telemetry/nccl/<job>.log``, NCCL 2.2x WARN lines with NCCL's time stamps);
* ``ecn-absent``: a NIC paused by PFC a fifth to two fifths of every interval while it never counts an ECN mark
  or a CNP (DCQCN off);
* ``nccl-leaf-uplinks``: one uplink of a leaf drops a share of the flows ECMP hashes onto it and no counter shows
  it: NCCL completion errors, from both sides, between four of the leaf's NICs (each with one peer) and NICs of the
  same jobs' hosts on other leaves. NCCL cannot tell which uplink, so the root cause is the leaf (truth names the
  uplink the twin broke under ``"uplink"``);
* ``nccl-uplink-optic``: the same errors, and one end of one of the leaf's uplinks receives rising uncorrected
  errors: the root cause is that optic, whose counters say which uplink the errors crossed;
* ``pfc-storm``: a NIC whose receive path is stuck sends PFC pause on the RoCE priority most of every interval
  (``tx_prio3_pause_duration``, 80-95 %); its leaf port is paused as long (rx pause), its priority-3 egress queue
  fills and stays full, the leaf's PFC watchdog on that queue detects a storm every 2 minutes (and restores it in
  between), and the pause spreads upstream: the leaf sends pause out of its uplinks (55-75 %, each one a
  HEALTH-PFC-STORM of its own that the localisation must trace back to the NIC) and the spines out of their ports
  towards the other leaves (20-40 %, under the detector's share). The root cause is the NIC; the jobs on its host
  stall.

The two uplink kinds hurt every job with a rank pair whose paths may cross the leaf's uplinks (the leaf) or that
uplink (the optic): two of its hosts on two leaves, one of them this leaf, that share a spine (the uplink's).

Noise (must not become an incident): application Xids (13, 31) and a row-remap event (63), a rank whose peer
process died (its peers report errors against it; it reports none), a single NIC pair with errors, pairs across
leaves from one NIC of a leaf to two other leaves (too few of the leaf's NICs to blame its uplinks), and a NIC paused
often under congestion while ECN marks and CNPs keep coming (congestion control working).
"""

from __future__ import annotations

import dataclasses
import random
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from unifab import layout
from unifab.model import Endpoint, Fabric, Link, Nic, host_id, switch_id
from unifab.parse.host import ethtool_module as em
from unifab.parse.host.xid import normalize_pci
from unifab.twin.files import write_text


class _Counter(Protocol):
    """What this module touches of :class:`unifab.twin.faults._Counter` (structural: no import cycle)."""

    labels: tuple[tuple[str, str], ...]
    start: int
    increments: list[int]
    stop: int | None


class _Timelines(Protocol):
    fabric: Fabric
    samples: int
    step: float
    missing: dict[str, set[int]]

    @property
    def devices(self) -> Mapping[str, Mapping[str, _Counter]]: ...  # device -> key -> counter

    def end(self, end: Endpoint, counter: str) -> _Counter: ...

    def nic(self, nic: Nic, counter: str) -> _Counter: ...


class _Injector(Protocol):
    rng: random.Random
    times: list[float]
    used_hosts: set[str]
    used_ends: set[Endpoint]
    touched_hosts: set[str]
    kernel: dict[str, list[tuple[float, str]]]
    nccl: list[tuple[float, str]]
    modules: dict[tuple[str, str], str]

    @property
    def t(self) -> _Timelines: ...

    def _truth(self, kind: str, root_kind: str, root: str, at: int, hosts: set[str]) -> dict[str, Any]: ...


__all__ = ["KINDS", "inject", "noise", "restore_originals", "write_logs"]

KINDS = (
    "leaf-down",
    "host-down",
    "nic-down",
    "optic-dom",
    "gpu-xid-79",
    "gpu-xid-48",
    "gpu-xid-94",
    "nccl-bad-link",
    "ecn-absent",
    "nccl-leaf-uplinks",
    "nccl-uplink-optic",
    "pfc-storm",
)
_XID_TEXT = {
    79: "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    48: "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the "
    "framebuffer at partition 6, subpartition 0.",
    94: "pid=48213, name=python3, Contained: SM (0x1). RST: No, D-RST: No",
    13: "pid=48213, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
    31: "pid=48213, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ "
    "0x7f12_34560000. Fault is of type FAULT_PDE ACCESS_TYPE_READ",
    63: "pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000000000a1b2c) marked for remapping, reset gpu "
    "to activate.",
}


def _peer(link: Link, end: Endpoint) -> Endpoint:
    return link.b if link.a == end else link.a


def _links_of(inj: _Injector, node: str) -> list[tuple[Endpoint, Endpoint]]:
    """(this node's end, the far end) of every link of ``node``."""
    return [
        (e, _peer(lk, e)) for lk in inj.t.fabric.links for e in (lk.a, lk.b) if e.node == node and _peer(lk, e) != e
    ]


def _goes_down(inj: _Injector, far: Endpoint, at: int) -> None:
    """The far end of a dead device: its link state falls to 0 at sample ``at`` and it counts one link-down."""
    t = inj.t
    t.end(far, "oper_up").increments[at - 1] -= 1
    c = t.end(far, "link_down")
    c.increments[at - 1] += 1  # carrier_changes counts the one change (down), a link-down counter one event


def _free_nics(inj: _Injector) -> list[Nic]:
    fabric = inj.t.fabric
    return [
        n
        for h in sorted(fabric.hosts)
        if h not in inj.used_hosts
        for n in sorted(fabric.hosts[h].nics.values(), key=lambda x: x.netdev)
        if n.endpoint not in inj.used_ends and n.endpoint in _linked(inj)
    ]


def _linked(inj: _Injector) -> set[Endpoint]:
    return {e for lk in inj.t.fabric.links for e in (lk.a, lk.b)}


def inject(inj: _Injector, kind: str, at: int) -> dict[str, Any] | None:
    t, rng, fabric = inj.t, inj.rng, inj.t.fabric
    at = max(at, 1)
    if kind in ("nccl-leaf-uplinks", "nccl-uplink-optic"):
        return _uplinks(inj, kind, at)
    if kind == "leaf-down":
        leaves = sorted(
            s
            for s in fabric.switches
            if (ends := _links_of(inj, s))
            and any(far.node in fabric.hosts for _, far in ends)
            and not any(e in inj.used_ends or far in inj.used_ends for e, far in ends)
        )
        if not leaves:
            return None
        leaf = rng.choice(leaves)
        t.missing[leaf] = set(range(at, t.samples))
        hosts: set[str] = set()
        for e, far in _links_of(inj, leaf):
            inj.used_ends.update((e, far))
            _goes_down(inj, far, at)
            if far.node in fabric.hosts:
                hosts.add(far.node)
        inj.touched_hosts.update(hosts)
        return inj._truth(kind, "switch", switch_id(leaf), at, hosts)
    if kind == "host-down":
        busy = inj.used_hosts | inj.touched_hosts
        candidates = sorted(h for h in fabric.hosts if h not in busy and _links_of(inj, h))
        if not candidates:
            return None
        host = rng.choice(candidates)
        inj.used_hosts.add(host)
        t.missing[host] = set(range(at, t.samples))
        for e, far in _links_of(inj, host):
            inj.used_ends.update((e, far))
            _goes_down(inj, far, at)
        return inj._truth(kind, "host", host_id(host), at, {host})
    nics = _free_nics(inj)
    if kind.startswith("gpu-xid-"):
        return _xid(inj, int(kind.rsplit("-", 1)[1]), at)
    if not nics:
        return None
    nic = rng.choice(nics)
    inj.used_ends.add(nic.endpoint)
    inj.touched_hosts.add(nic.host)
    link = next(lk for lk in fabric.links if nic.endpoint in (lk.a, lk.b))
    if kind == "nic-down":
        for c in t.devices.get(nic.host, {}).values():
            if ("device", nic.netdev) in c.labels or ("device", nic.rdma_dev or "") in c.labels:
                c.stop = at
        far = _peer(link, nic.endpoint)
        inj.used_ends.add(far)
        _goes_down(inj, far, at)
        return inj._truth(kind, "nic", nic.id, at, {nic.host})
    if kind == "optic-dom":
        errors = t.nic(nic, "symbol_errors")
        for k, i in enumerate(range(at, t.samples - 1)):
            errors.increments[i] += rng.randrange(5, 20) * (1 + k // 4)
        inj.modules[(nic.host, nic.netdev)] = ""  # rewritten by write_logs from the module the host already has
        return inj._truth(kind, "optic", f"optic:{nic.host}:{nic.netdev}", at, {nic.host})
    if kind == "ecn-absent":  # DCQCN off on this NIC: congestion only ever shows as PFC pause
        rx = t.nic(nic, "pause_rx_us")
        for i in range(at, t.samples - 1):
            rx.increments[i] = int(rng.uniform(0.2, 0.4) * t.step * 1e6)
        for name in ("ecn_marked", "cnp_sent", "cnp_handled"):
            c = t.nic(nic, name)
            c.increments[:] = [0] * len(c.increments)
        return inj._truth(kind, "nic", nic.id, at, {nic.host})
    if kind == "pfc-storm":
        return _pfc_storm(inj, nic, link, at)
    return _nccl(inj, nic, link, at)


def _pfc_storm(inj: _Injector, nic: Nic, link: Link, at: int) -> dict[str, Any]:
    """A stuck receiver's pause storm and its spread upstream (module docstring)."""
    t, rng, fabric = inj.t, inj.rng, inj.t.fabric
    leaf_end = _peer(link, nic.endpoint)
    inj.used_ends.add(leaf_end)
    sent = t.nic(nic, "pause_tx_us")
    for i in range(at, t.samples - 1):
        sent.increments[i] = int(rng.uniform(0.8, 0.95) * t.step * 1e6)
    if leaf_end.node not in fabric.switches:
        return inj._truth("pfc-storm", "nic", nic.id, at, {nic.host})
    paused, queue = t.end(leaf_end, "pause_rx_us"), t.end(leaf_end, "queue_bytes")
    paused.start = rng.randrange(0, 10**9)
    for i in range(at, t.samples - 1):  # the same pause, seen from the other side
        paused.increments[i] = sent.increments[i] - rng.randrange(0, 1000)
    queue.start = rng.randrange(0, 64) * 1024
    queue.increments[at - 1] += rng.randrange(8, 12) * 2**20 - queue.start  # full: its share of the buffer
    storms = t.end(leaf_end, "pfcwd_storms")  # the leaf's PFC watchdog on that queue: a storm every 2 minutes,
    for i in range(at, t.samples - 1, 4):  # each dropped for its restoration time, then back
        storms.increments[i] = 1
    upstream = [e for e, far in _links_of(inj, leaf_end.node) if far.node in fabric.switches]
    ups = set(upstream)
    spines = sorted({_peer(lk, e).node for lk in fabric.links for e in (lk.a, lk.b) if e in ups})
    far_ports = [e for x in spines for e, far in _links_of(inj, x) if far not in ups]
    for ends, low, high in ((upstream, 0.55, 0.75), (far_ports, 0.2, 0.4)):
        for end in ends:
            if end in inj.used_ends:
                continue
            c = t.end(end, "pause_tx_us")
            for i in range(at + 1, t.samples - 1):  # one interval later: the buffers fill first
                c.increments[i] = int(rng.uniform(low, high) * t.step * 1e6)
    inj.used_ends.update(upstream)
    return inj._truth("pfc-storm", "nic", nic.id, at, {nic.host})


def _xid(inj: _Injector, code: int, at: int) -> dict[str, Any] | None:
    fabric = inj.t.fabric
    busy = inj.used_hosts | set(inj.kernel)
    hosts = sorted(h for h in fabric.hosts if h not in busy and fabric.hosts[h].gpus)
    if not hosts:
        return None
    host = fabric.hosts[inj.rng.choice(hosts)]
    gpu = host.gpus[inj.rng.choice(sorted(host.gpus))]
    inj.touched_hosts.add(host.name)
    _kernel_line(inj, host.name, gpu.pci_bus_id, code, inj.times[at])
    return inj._truth(f"gpu-xid-{code}", "gpu", f"gpu:{host.name}:{gpu.index}", at, {host.name})


def _kernel_line(inj: _Injector, host: str, bdf: str | None, code: int, when: float) -> None:
    pci = normalize_pci(f"PCI:{bdf}") if bdf else None
    where = f"PCI:{(pci or '0000:00:00.0').removesuffix('.0')}"
    inj.kernel.setdefault(host, []).append((when, f"NVRM: Xid ({where}): {code}, {_XID_TEXT[code]}"))


def _ipv4(nic: Nic) -> str | None:
    return next((g.ipv4 for g in nic.gids if g.ipv4), None)


def _error_line(local: Nic, remote: Nic, pid: int) -> str | None:
    a, b = _ipv4(local), _ipv4(remote)
    if a is None or b is None:
        return None
    dev = local.rdma_dev or local.netdev
    return (
        f"{local.host}:{pid}:{pid + 57} [{dev.rsplit('_', 1)[-1]}] transport/net_ib.cc:2453 NCCL WARN NET/IB: Got "
        f"completion from peer {b}<{40000 + pid % 20000}> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
        f"localGid ::ffff:{a} remoteGids::ffff:{b} hca {dev}"
    )


def _nccl(inj: _Injector, nic: Nic, link: Link, at: int) -> dict[str, Any] | None:
    others = [n for n in _free_nics(inj) if n.host != nic.host and n.netdev == nic.netdev and _ipv4(n)]
    if len(others) < 3 or _ipv4(nic) is None:
        return None
    peers = inj.rng.sample(others, 3)
    inj.touched_hosts.update(p.host for p in peers)
    inj.used_ends.update(p.endpoint for p in peers)  # no other fault's NCCL errors on them (one peer more each)
    for k in range(6):
        peer, when = peers[k % 3], inj.times[min(at + k, len(inj.times) - 1)]
        for local, remote in ((nic, peer), (peer, nic)):
            line = _error_line(local, remote, 4000 + k)
            if line is not None:
                inj.nccl.append((when, line))
    return inj._truth("nccl-bad-link", "link", link.id, at, {nic.host})


def _leaves(fabric: Fabric) -> tuple[dict[Endpoint, str], dict[str, list[Link]]]:
    """Each host NIC end's leaf, and each leaf's uplinks (its links to switches that have no host link)."""
    leaf_of = {
        near: far.node
        for lk in fabric.links
        for near, far in ((lk.a, lk.b), (lk.b, lk.a))
        if near.node in fabric.hosts and far.node in fabric.switches
    }
    leaves = set(leaf_of.values())
    uplinks: dict[str, list[Link]] = {}
    for lk in fabric.links:
        for near, far in ((lk.a, lk.b), (lk.b, lk.a)):
            if near.node in leaves and far.node in fabric.switches and far.node not in leaves:
                uplinks.setdefault(near.node, []).append(lk)
    return leaf_of, uplinks


def _crossing(fabric: Fabric, leaf_of: dict[Endpoint, str], leaf: str, others: set[str]) -> list[str]:
    """Jobs with two hosts, one with a NIC on ``leaf``, the other with a NIC on one of ``others``."""
    on: dict[str, set[str]] = {}
    for end, name in leaf_of.items():
        on.setdefault(end.node, set()).add(name)
    out = []
    for job in fabric.jobs.values():
        hosts = list(dict.fromkeys(job.hosts))
        if any(leaf in on.get(a, ()) and on.get(b, set()) & others for a in hosts for b in hosts if a != b):
            out.append(job.id)
    return sorted(out)


def _marked(inj: _Injector, leaf: str) -> bool:
    return Endpoint(leaf, "") in inj.used_ends  # a leaf already carrying NCCL errors of a switch-side fault


def _uplinks(inj: _Injector, kind: str, at: int) -> dict[str, Any] | None:
    """NCCL errors between four NICs of one leaf and NICs on other leaves (one peer each): ECMP over its uplinks."""
    fabric, rng = inj.t.fabric, inj.rng
    leaf_of, uplinks = _leaves(fabric)
    free = [n for n in _free_nics(inj) if _ipv4(n) and not _marked(inj, leaf_of.get(n.endpoint, ""))]
    on_leaf: dict[str, list[Nic]] = {}
    for n in free:
        on_leaf.setdefault(leaf_of[n.endpoint], []).append(n)
    job_of = {h: j.id for j in fabric.jobs.values() for h in j.hosts}
    candidates = sorted(
        leaf
        for leaf, links in uplinks.items()
        if len(on_leaf.get(leaf, [])) >= 4
        and not any(e in inj.used_ends for lk in links for e in (lk.a, lk.b))
        and len({leaf_of[n.endpoint] for n in free} - {leaf}) >= 2
    )
    if not candidates:
        return None
    leaf = rng.choice(candidates)
    near = rng.sample(on_leaf[leaf], 4)
    chosen = {n.id for n in near}
    pairs: list[tuple[Nic, Nic]] = []
    far_leaves: set[str] = set()
    for n in near:  # a peer of the same job on a leaf not used yet first, else any other free NIC off this leaf
        pool = [p for p in free if p.id not in chosen and p.host != n.host and leaf_of[p.endpoint] != leaf]
        if not pool:
            return None
        best = max(
            (job_of.get(p.host) == job_of.get(n.host)) + 2 * (leaf_of[p.endpoint] not in far_leaves) for p in pool
        )
        tier = [
            p
            for p in pool
            if (job_of.get(p.host) == job_of.get(n.host)) + 2 * (leaf_of[p.endpoint] not in far_leaves) == best
        ]
        peer = rng.choice(tier)
        chosen.add(peer.id)
        far_leaves.add(leaf_of[peer.endpoint])
        pairs.append((n, peer))
    if len(far_leaves) < 2:
        return None
    for lk in uplinks[leaf]:
        inj.used_ends.update((lk.a, lk.b))
    inj.used_ends.update(Endpoint(x, "") for x in (leaf, *far_leaves))
    for a, b in pairs:
        inj.used_ends.update((a.endpoint, b.endpoint))
        inj.touched_hosts.update((a.host, b.host))
    for k in range(8):
        a, b = pairs[k % 4]
        when = inj.times[min(at + k, len(inj.times) - 1)]
        for local, remote in ((a, b), (b, a)):
            line = _error_line(local, remote, 5000 + k)
            if line is not None:
                inj.nccl.append((when, line))
    bad = rng.choice(uplinks[leaf])
    spine = bad.b.node if bad.a.node == leaf else bad.a.node
    spines = {lk.b.node if lk.a.node == leaf else lk.a.node for lk in uplinks[leaf]}
    if kind == "nccl-leaf-uplinks":
        others = {
            x for x, links in uplinks.items() if x != leaf and spines & {e.node for lk in links for e in (lk.a, lk.b)}
        }
        entry = inj._truth(kind, "switch", switch_id(leaf), at, set())
        entry["uplink"] = bad.id
    else:
        end = rng.choice((bad.a, bad.b))
        errors, crc = inj.t.end(end, "fec_uncorrectable"), inj.t.end(end, "crc_errors")
        for k, i in enumerate(range(at, inj.t.samples - 1)):
            errors.increments[i] += rng.randrange(5, 20) * (1 + k // 4)
            crc.increments[i] += rng.randrange(1, 5)
        others = {
            x for x, links in uplinks.items() if x != leaf and any(spine in (lk.a.node, lk.b.node) for lk in links)
        }
        entry = inj._truth(kind, "optic", f"optic:{end.node}:{end.port}", at, set())
    entry["jobs"] = _crossing(fabric, leaf_of, leaf, others)
    return entry


def noise(inj: _Injector) -> None:
    """Application Xids, a dead peer process, one failing pair, congestion handled by ECN (see the module)."""
    rng, fabric, t = inj.rng, inj.t.fabric, inj.t
    n = len(inj.times) - 1
    quiet = sorted(h for h in fabric.hosts if h not in inj.used_hosts and fabric.hosts[h].gpus)
    if quiet:
        host = fabric.hosts[rng.choice(quiet)]
        for code in (13, 31, 63):
            gpu = host.gpus[rng.choice(sorted(host.gpus))]
            _kernel_line(inj, host.name, gpu.pci_bus_id, code, inj.times[rng.randrange(n)])
    leaf_of, _ = _leaves(fabric)
    nics = [x for x in _free_nics(inj) if _ipv4(x) and not _marked(inj, leaf_of.get(x.endpoint, ""))]
    sampled: list[Nic] = []
    if len(nics) >= 6:
        sampled = rng.sample(nics, 6)
        dead, *reporters = sampled
        for k, r in enumerate(reporters[:3]):  # the dead rank reports nothing
            line = _error_line(r, dead, 7000 + k)
            if line:
                inj.nccl.append((inj.times[rng.randrange(n)], line))
        a, b = reporters[3], reporters[4]  # one pair, once from each side
        for local, remote in ((a, b), (b, a)):
            line = _error_line(local, remote, 7100)
            if line:
                inj.nccl.append((inj.times[rng.randrange(n)], line))
    if nics:
        busy = rng.choice(nics)
        rx, cnp = t.nic(busy, "pause_rx_us"), t.nic(busy, "cnp_handled")
        first = rng.randrange(n // 2)
        for i in range(first, min(n, first + 8)):
            rx.increments[i] += int(0.25 * t.step * 1e6)
            cnp.increments[i] += rng.randrange(200, 2000)
    # one rank reports errors towards two peers on two other leaves (they report none back): too few of its leaf's
    # NICs for its uplinks, one side only for its link; away from the leaves the pair above or a fault's errors use
    taken = {leaf_of.get(e.endpoint) for e in sampled[4:]}
    spread = [x for x in nics if leaf_of.get(x.endpoint) not in taken and x not in sampled]
    if spread:
        x = rng.choice(spread)
        others = [p for p in spread if p.host != x.host and leaf_of.get(p.endpoint) != leaf_of.get(x.endpoint)]
        by_leaf: dict[str, Nic] = {}
        for p in others:
            by_leaf.setdefault(leaf_of[p.endpoint], p)
        if len(by_leaf) >= 2:
            for k, leaf in enumerate(rng.sample(sorted(by_leaf), 2)):
                line = _error_line(x, by_leaf[leaf], 7200 + k)
                if line:
                    inj.nccl.append((inj.times[rng.randrange(n)], line))


def _stamp(when: float, iso: bool) -> str:
    moment = datetime.fromtimestamp(when, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S+0000") if iso else moment.strftime("[%Y-%m-%d %H:%M:%S]")


def _bad_module(text: str, where: str) -> str:
    """The module with lane 1's rx power at a third of its low alarm level and the rx alarm/warning flags on."""
    m = em.parse(text, where)
    levels = m.thresholds.rx_power_mw if m.thresholds else None
    low = levels.low_alarm if levels and levels.low_alarm else 0.1
    on = em.Flags(high_alarm=False, low_alarm=True, high_warning=False, low_warning=True)
    lanes = list(m.lanes)
    if lanes:
        mw = round(low / 3, 4)
        lanes[0] = dataclasses.replace(lanes[0], rx_power_mw=mw, rx_power_dbm=em.mw_to_dbm(mw), rx_power_flags=on)
    return em.dump(dataclasses.replace(m, lanes=tuple(lanes)))


def write_logs(inj: _Injector, bundle: Path) -> None:
    """``telemetry/kernel/<host>.log``, ``telemetry/nccl/faults.log`` and the alarmed modules' ``ethtool -m``."""
    for host, lines in sorted(inj.kernel.items()):
        body = "".join(f"{_stamp(w, True)} {host} kernel: {msg}\n" for w, msg in sorted(lines))
        write_text(bundle / layout.KERNEL_LOG_DIR / f"{host}{layout.LOG_SUFFIX}", body)
    if inj.nccl:
        body = "".join(f"{_stamp(w, False)} {line}\n" for w, line in sorted(inj.nccl))
        write_text(bundle / layout.NCCL_LOG_DIR / f"faults{layout.LOG_SUFFIX}", body)
    for host, netdev in sorted(inj.modules):
        rel = f"{layout.HOSTS}/{host}/{layout.ETHTOOL_M_DIR}/{netdev}.txt"
        path = bundle / rel
        if path.is_file():
            text = path.read_text()
            write_text(bundle / layout.TWIN_ORIGINALS / rel, text)  # put back by the next write_faults
            write_text(path, _bad_module(text, str(path)))


def restore_originals(bundle: Path) -> None:
    """Put back every file an earlier :func:`write_logs` rewrote (``twin-originals/``), so faults written again on
    the same bundle start from the bundle as it was, not with the last run's alarmed modules."""
    saved = bundle / layout.TWIN_ORIGINALS
    if not saved.is_dir():
        return
    for path in sorted(p for p in saved.rglob("*") if p.is_file()):
        write_text(bundle / path.relative_to(saved), path.read_text())
    shutil.rmtree(saved)
