"""Arista EOS configuration for a set of lossless RoCE ports, and the running-config after applying it.

:func:`render_eos` writes, as ``show running-config`` prints it (and as
:func:`unifab.parse.switch.eos_config.dump` prints records, so the project's parser reads it back):

* global ``qos map dscp <list> to traffic-class <priority>`` covering all 64 DSCPs (so EOS's
  unverified default map never matters) and ``qos map traffic-class <list> to tx-queue <queue>``
  for all eight classes;
* ``qos profile NAME``: ``qos trust dscp``, ``priority-flow-control on``, ``priority-flow-control
  priority N no-drop`` per lossless priority (EOS ties PFC priority *n* to traffic class *n*), the
  PFC watchdog (``priority-flow-control pause watchdog``, ``... port action drop|notify-only``,
  ``... port timer timeout S polling-interval auto recovery-time S``), and one ``tx-queue`` block per
  queue the ETS/ECN settings name: ``priority strict`` or ``no priority`` + ``bandwidth percent W``,
  ``random-detect ecn minimum-threshold X bytes maximum-threshold Y bytes max-mark-probability P``.
  Thresholds are in ``bytes``: the one EOS unit whose size is settled (reference switch-qos §2.2);
* per interface: ``mtu`` and ``service-profile NAME``. A switch MTU above EOS's maximum (9214; the
  ``nvidia-spectrum-x`` preset asks 9216, which SONiC and NVUE take) is written as 9214 by the rule the
  fixes follow (:func:`unifab.platforms.clamp_mtu`), and the section opens with a ``!`` line saying so.

A watchdog action ``forward`` has no port-level keyword on EOS; it becomes the global
``priority-flow-control pause watchdog action no-drop``. Not expressible on EOS, so not written: the
cable length and PFC headroom (platform-managed, reference §4) and the port speed (not QoS intent).

:func:`apply_to_running_config` merges the rendered section into a running-config: the rendered
``qos profile`` replaces the profile of that name, an interface stanza keeps its non-QoS lines
(description, speed, addresses) but loses every QoS line of its own (``qos``, ``priority-flow-control``,
``service-policy type qos``, ``tx-queue`` blocks, ``mtu``, ``service-profile``) so the profile is
what applies, and rendered global lines replace the current lines of the same setting (the whole DSCP
and traffic-class maps, each watchdog default). ``priority-flow-control all off`` is removed, since it
would turn PFC off on every port.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from unifab.errors import RenderError
from unifab.parse._text import natural_key
from unifab.parse.switch import eos_config as ec
from unifab.platforms import clamp_mtu
from unifab.platforms.eos import MAX_MTU, PLATFORM
from unifab.profile import PortSpec, QosProfile
from unifab.render.switch_qos import check_name, derive, port_mtus, sorted_ports

__all__ = ["PORT_NAME", "PROFILE_NAME", "apply_to_running_config", "records", "render_eos"]

OS = "eos"
PORT_NAME = re.compile(r"Ethernet\d{1,6}(/\d{1,3}){0,2}")  # a spine of a 100,000-GPU fabric: Ethernet100088
PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MTU_RANGE = (68, MAX_MTU)  # [I] EOS interface MTU takes 68-9214 (reference switch-qos §2.4)
PORT_ACTIONS = {"drop": "drop", "alert": "notify-only"}  # profile action -> EOS port-level action
GLOBAL_ACTIONS = {"forward": "no-drop"}  # only the global watchdog has no-drop


def render_eos(ports: Sequence[PortSpec], profile: QosProfile, *, mtus: Mapping[str, int] | None = None) -> str:
    """The EOS configuration section that makes ``ports`` lossless RoCE ports running ``profile``.

    Raises :class:`~unifab.errors.RenderError` for a port that is not ``Ethernet<n>[/<n>[/<n>]]``, a
    profile name EOS would not take as a ``qos profile`` name, or a profile a switch cannot run. A switch
    MTU above EOS's maximum is written as that maximum, and a first ``!`` line says what became of it.
    ``mtus`` gives some ports another MTU (a link to a switch whose platform takes less).
    """
    text = ec.dump(records(ports, profile, mtus=mtus))
    fitted, note = _fit_mtu(profile)
    if note is None:
        return text
    return f"! unifab: {note}: the intent's switch MTU {profile.switch_mtu} is set as mtu {fitted.switch_mtu}\n" + text


def _fit_mtu(profile: QosProfile) -> tuple[QosProfile, str | None]:
    """``profile`` with its switch MTU as an EOS port takes it (:func:`~unifab.platforms.clamp_mtu`), and the note
    when that changed it. A value that is no MTU at all is left for :func:`derive` to refuse by name."""
    mtu = profile.switch_mtu
    if isinstance(mtu, bool) or not isinstance(mtu, int):
        return profile, None
    fitted, note = clamp_mtu(PLATFORM, mtu)
    return (profile, None) if note is None else (replace(profile, switch_mtu=fitted), note)


def records(ports: Sequence[PortSpec], profile: QosProfile, *, mtus: Mapping[str, int] | None = None) -> ec.EosConfig:
    """What :func:`render_eos` prints, as configuration records (``hostname`` unset, ``interface_qos`` unresolved)."""
    name = check_name(OS, "profile name", profile.name, PROFILE_NAME, "letters, digits, '_' or '-', up to 64")
    sq = derive(_fit_mtu(profile)[0], OS, MTU_RANGE)
    specs = sorted_ports(OS, ports, PORT_NAME, "Ethernet<n>[/<n>[/<n>]]")
    port_mtu = port_mtus(OS, specs, sq.mtu, mtus, MTU_RANGE)
    queues: dict[int, ec.EosQueueConfig] = {}
    for q in sorted({*sq.strict, *sq.weights, *sq.ecn}):
        e = sq.ecn.get(q)
        queues[q] = ec.EosQueueConfig(
            index=q,
            strict=True if q in sq.strict else (False if q in sq.weights else None),
            bandwidth_percent=sq.weights.get(q),
            ecn=None if e is None else True,
            min_threshold=None if e is None else ec.EosThreshold(e.min_bytes, "bytes", e.min_bytes),
            max_threshold=None if e is None else ec.EosThreshold(e.max_bytes, "bytes", e.max_bytes),
            max_mark_probability=None if e is None else e.max_probability,
        )
    wd = sq.pfcwd
    settings = ec.EosQosSettings(
        trust="dscp",
        pfc_on=True,
        pfc_priorities=dict.fromkeys(sq.lossless, True),
        pfcwd_enabled=wd is not None,
        pfcwd_action=None if wd is None else PORT_ACTIONS.get(wd.action),
        pfcwd_timer=None
        if wd is None
        else ec.EosWatchdogTimer(timeout_ms=wd.detection_ms, polling_auto=True, recovery_time_ms=wd.restoration_ms),
        tx_queues=queues,
    )
    if wd is not None and wd.detection_ms <= 0:
        raise RenderError(OS, f"PFC watchdog timeout must be positive, got {wd.detection_ms} ms")
    interfaces = {
        p.name: ec.EosInterface(name=p.name, mtu=port_mtu[p.name], service_profile=name, qos=ec.EosQosSettings())
        for p in specs
    }
    return ec.EosConfig(
        hostname=None,
        interfaces=interfaces,
        qos_profiles={name: ec.EosQosProfile(name, settings)},
        qos_maps=ec.EosQosMaps(dscp_to_tc=dict(sq.dscp_to_priority), tc_to_queue=dict(sq.queue_of)),
        pfc_watchdog=ec.EosPfcWatchdogGlobal(action=GLOBAL_ACTIONS.get(wd.action) if wd else None),
    )


# --- apply ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """A top-level line with its indented body (or a body line with its sub-block)."""

    header: str
    body: list[str] = field(default_factory=list)


_BLOCK_END = ("banner ", "comment")
_INTERFACE_QOS = re.compile(
    r"(no )?(qos |priority-flow-control|service-policy type qos|service-profile |mtu |"
    r"tx-queue |uc-tx-queue |mc-tx-queue )"
)
_SETTING_VALUE = re.compile(r"(priority-flow-control pause watchdog (?:default \S+|action))( .*)?")


def _items(text: str) -> list[_Item]:
    """Top-level items of a running-config (``!`` separators and ``end`` dropped)."""
    items: list[_Item] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if not line.strip() or line.startswith("!") or line == "end":
            continue
        if line.startswith(" ") and items:
            items[-1].body.append(line)
            continue
        item = _Item(line.strip())
        items.append(item)
        if line.startswith(_BLOCK_END):  # banner/comment text runs to EOF without indentation
            while i < len(lines):
                item.body.append(lines[i].rstrip())
                i += 1
                if lines[i - 1].strip() == "EOF":
                    break
    return items


def _children(body: list[str]) -> list[_Item]:
    """An interface body as its direct children (3-space lines) with their deeper lines."""
    out: list[_Item] = []
    for line in body:
        if not line.strip() or line.strip() == "!":
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent > 3 and out:
            out[-1].body.append(line)
        else:
            out.append(_Item(line.strip()))
    return out


def _family(line: str) -> str:
    """What setting a global line sets, so a rendered line replaces the current line of that setting."""
    if line.startswith("qos map dscp ") and " to traffic-class " in line:
        return "qos map dscp to traffic-class"
    if line.startswith("qos map traffic-class ") and " to tx-queue " in line:
        return "qos map traffic-class to tx-queue"
    m = _SETTING_VALUE.fullmatch(line)
    return m.group(1) if m else line


def _block_key(header: str) -> tuple[str, str] | None:
    for kind in ("interface ", "qos profile "):
        if header.startswith(kind):
            return kind.strip(), header[len(kind) :].strip()
    return None


def _merge_interface(current: _Item, rendered: _Item) -> _Item:
    kept = [c for c in _children(current.body) if not _INTERFACE_QOS.match(c.header.removeprefix("no "))]
    body: list[str] = []
    for child in [*kept, *_children(rendered.body)]:
        if child.body:
            body.append("   !")  # as running-config prints a sub-block
        body.append(f"   {child.header}")
        body.extend(child.body)
    return _Item(current.header, body)


def apply_to_running_config(current: str, rendered: str) -> str:
    """The running-config after entering ``rendered`` (a :func:`render_eos` section) on a switch at ``current``.

    See the module docstring for the merge rules. Blocks keep their place; new global maps and
    profiles go before the first interface, new interfaces after the last one in natural order,
    new global watchdog lines at the end.
    """
    cur = _items(current)
    new = _items(rendered)
    new_blocks = {k: it for it in new if (k := _block_key(it.header)) is not None}
    new_globals = [it for it in new if _block_key(it.header) is None]
    families = {_family(it.header) for it in new_globals}
    pfc_on = any("priority-flow-control on" in line for it in new for line in it.body)

    out: list[_Item] = []
    placed: set[tuple[str, str]] = set()
    placed_families: set[str] = set()
    for item in cur:
        key = _block_key(item.header)
        if key is not None and key in new_blocks:
            placed.add(key)
            out.append(_merge_interface(item, new_blocks[key]) if key[0] == "interface" else new_blocks[key])
            continue
        if key is None:
            fam = _family(item.header)
            if fam in families:
                if fam not in placed_families:  # the rendered lines of this setting take the first one's place
                    placed_families.add(fam)
                    out.extend(g for g in new_globals if _family(g.header) == fam)
                continue
            if pfc_on and item.header == "priority-flow-control all off":
                continue
        out.append(item)

    pre = [g for g in new_globals if _family(g.header) not in placed_families and g.header.startswith("qos ")]
    post = [g for g in new_globals if _family(g.header) not in placed_families and not g.header.startswith("qos ")]
    pre += [it for k, it in new_blocks.items() if k[0] == "qos profile" and k not in placed]
    new_ifaces = sorted(
        (it for k, it in new_blocks.items() if k[0] == "interface" and k not in placed),
        key=lambda it: natural_key(it.header),
    )
    first_if = next((i for i, it in enumerate(out) if it.header.startswith("interface ")), len(out))
    out[first_if:first_if] = pre
    last_if = max((i for i, it in enumerate(out) if it.header.startswith("interface ")), default=len(out) - 1)
    out[last_if + 1 : last_if + 1] = new_ifaces
    out.extend(post)

    lines: list[str] = []
    for item in out:
        if item.body and lines and lines[-1] != "!":
            lines.append("!")  # running-config sets blocks apart from the global lines before them
        lines.append(item.header)
        lines.extend(item.body)
        if item.body and not item.header.startswith(_BLOCK_END):
            lines.append("!")
    lines.append("end")
    return "\n".join(lines) + "\n"
