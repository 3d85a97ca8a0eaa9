"""Arista EOS running-config: interfaces, QoS profiles and maps, and the resolved QoS view of each port.

Reads the text ``show running-config`` prints (EOS 4.2x; also AVD ``intended/configs/*.cfg`` and
hand-written CLI snippets, which use the same syntax). Blocks nest by indentation (three spaces a
level); ``!`` lines are comments; ``comment``/``banner`` bodies up to ``EOF`` are skipped.

Commands read (anything else is ignored, EOS configs are huge; a known command whose arguments do
not fit raises :class:`~unifab.errors.ParseError` naming the line):

* top level: ``hostname``, ``interface <names>`` (ranges ``Ethernet1-4``, ``Ethernet1/1-2`` and comma
  lists), ``qos profile NAME``, ``qos map dscp|cos <list> to traffic-class N [drop-precedence D]``,
  ``qos map traffic-class <list> to tx-queue|uc-tx-queue|dscp|cos N``, ``qos rewrite dscp``,
  ``qos random-detect ecn allow non-ect``, ``priority-flow-control all off``,
  ``priority-flow-control pause watchdog [default] timeout|polling-interval|recovery-time S``,
  ``priority-flow-control pause watchdog [default] action A``,
  ``priority-flow-control pause watchdog override action drop``;
* interface and ``qos profile`` bodies: ``qos trust dscp|cos|disabled`` (``no qos trust`` is
  ``disabled``, as AVD renders it), ``qos cos N``, ``qos dscp N``, ``service-policy type qos input P``,
  ``shape rate ...``, ``priority-flow-control on|off`` (also ``mode on|off``, ``no priority-flow-control``),
  ``priority-flow-control priority N no-drop|drop``, ``priority-flow-control pause watchdog``,
  ``... pause watchdog port action A``, ``... pause watchdog port timer timeout S polling-interval S|auto
  recovery-time S [forced]``, and ``tx-queue``/``uc-tx-queue``/``mc-tx-queue N`` sub-blocks;
* interface bodies only: ``description``, ``shutdown``, ``mtu``, ``speed``, ``switchport``/``no switchport``,
  ``ip address``, ``channel-group N mode M``, ``service-profile NAME``;
* queue sub-blocks: ``priority strict``/``no priority``, ``bandwidth [guaranteed] percent N``,
  ``shape rate ...``, ``random-detect ecn minimum-threshold X U maximum-threshold Y U
  [max-mark-probability P] [weight W]``, ``random-detect ecn count``, ``no random-detect ecn``.
  ``random-detect drop`` (WRED drop) is not modelled.

Times are seconds in the config and milliseconds in the records (``timeout_ms``). ECN thresholds keep
the configured number and unit; ``bytes`` is filled for ``bytes``/``kbytes``/``mbytes`` only (see
:data:`UNIT_BYTES`: the kbytes/mbytes base is an assumption) and is ``None`` for ``segments`` and time
units, whose byte size depends on the platform.

:func:`resolve` builds :class:`EosInterfaceQos` for every ``Ethernet*`` and ``Port-Channel*`` interface:
the applied ``qos profile`` first, the interface's own commands over it, the global maps over the
defaults (:mod:`~unifab.parse.switch.eos_config.defaults`). Named QoS maps (``qos map dscp to
traffic-class NAME`` blocks) and policy-maps are not modelled; ``service_policy`` is reported so a
check can say the maps may be overridden. A ``service-profile`` naming no profile in the config
contributes nothing.

:func:`dump` writes records back as running-config text that :func:`parse` reads to the same records.
"""

from unifab.parse.switch.eos_config.defaults import (
    DEFAULT_COS_TO_TC,
    DEFAULT_DSCP_TO_TC,
    DEFAULT_MTU_ROUTED,
    DEFAULT_MTU_SWITCHED,
    DEFAULT_PFC_ON,
    DEFAULT_PFCWD_ACTION,
    DEFAULT_PFCWD_ENABLED,
    DEFAULT_QUEUE_STRICT,
    DEFAULT_SWITCHPORT,
    DEFAULT_TC_TO_QUEUE,
    DEFAULT_TRUST_ROUTED,
    DEFAULT_TRUST_SWITCHED,
    MAX_RANGE,
    PFCWD_ACTIONS,
    QOS_INTERFACE_PREFIXES,
    QUEUE_KINDS,
    TRUST_MODES,
    UNIT_BYTES,
)
from unifab.parse.switch.eos_config.reader import Owner, parse
from unifab.parse.switch.eos_config.records import (
    EosConfig,
    EosInterface,
    EosInterfaceQos,
    EosPfcWatchdog,
    EosPfcWatchdogGlobal,
    EosQosMaps,
    EosQosProfile,
    EosQosSettings,
    EosQueue,
    EosQueueConfig,
    EosThreshold,
    EosWatchdogTimer,
)
from unifab.parse.switch.eos_config.resolution import resolve
from unifab.parse.switch.eos_config.tokens import expand_interfaces, speed_to_mbps
from unifab.parse.switch.eos_config.writer import dump

__all__ = [
    "DEFAULT_COS_TO_TC",
    "DEFAULT_DSCP_TO_TC",
    "DEFAULT_MTU_ROUTED",
    "DEFAULT_MTU_SWITCHED",
    "DEFAULT_PFCWD_ACTION",
    "DEFAULT_PFCWD_ENABLED",
    "DEFAULT_PFC_ON",
    "DEFAULT_QUEUE_STRICT",
    "DEFAULT_SWITCHPORT",
    "DEFAULT_TC_TO_QUEUE",
    "DEFAULT_TRUST_ROUTED",
    "DEFAULT_TRUST_SWITCHED",
    "MAX_RANGE",
    "PFCWD_ACTIONS",
    "QOS_INTERFACE_PREFIXES",
    "QUEUE_KINDS",
    "TRUST_MODES",
    "UNIT_BYTES",
    "EosConfig",
    "EosInterface",
    "EosInterfaceQos",
    "EosPfcWatchdog",
    "EosPfcWatchdogGlobal",
    "EosQosMaps",
    "EosQosProfile",
    "EosQosSettings",
    "EosQueue",
    "EosQueueConfig",
    "EosThreshold",
    "EosWatchdogTimer",
    "Owner",
    "dump",
    "expand_interfaces",
    "parse",
    "resolve",
    "speed_to_mbps",
]
