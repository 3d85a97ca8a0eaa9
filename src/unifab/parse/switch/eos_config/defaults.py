"""What EOS does where its running-config is silent, and the vocabularies the reader accepts.

The tags say how sure each default is: [V] verified in a primary source, [I] inferred from samples,
[U] unverified (reference §2.4).
"""

from __future__ import annotations

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
]

# --- defaults where the config is silent (reference §2.4: none of these is verified on a device) ----

# [U] "DSCP/8, with DSCP 0-7 -> TC1 and 8-15 -> TC0" (reference §2.4); confirm with `show qos maps`.
DEFAULT_DSCP_TO_TC: dict[int, int] = {d: {0: 1, 1: 0}.get(d // 8, d // 8) for d in range(64)}
# [U] the same swap for CoS (0 -> TC1, 1 -> TC0, n -> TCn); no primary source found.
DEFAULT_COS_TO_TC: dict[int, int] = {c: {0: 1, 1: 0}.get(c, c) for c in range(8)}
# [U] TC -> tx-queue is believed to be the identity (reference §2.4).
DEFAULT_TC_TO_QUEUE: dict[int, int] = {tc: tc for tc in range(8)}
# [U] "DSCP on routed ports, CoS on switchports" (reference §2.4).
DEFAULT_TRUST_ROUTED = "dscp"
DEFAULT_TRUST_SWITCHED = "cos"
# [U] An Ethernet/Port-Channel interface is a switchport unless `no switchport` (EOS default on
# most platforms; some newer ones default to routed). An interface with `ip address` and no explicit
# `switchport` is taken as routed, since a switchport cannot carry an address.
DEFAULT_SWITCHPORT = True
# [I] from the `show interfaces` samples (vEOS 4.23.5M): routed Ethernet ports report 1500 (no
# `mtu` configured, l3MtuConfigured false), bridged and port-channel members report 9214.
DEFAULT_MTU_ROUTED = 1500
DEFAULT_MTU_SWITCHED = 9214
# [U] tx-queues are strict priority until `no priority` (EOS documentation; not checked here).
DEFAULT_QUEUE_STRICT = True
# [V] the AVD schema says the default PFC watchdog stuck-queue action is error-disable.
DEFAULT_PFCWD_ACTION = "errdisable"
# [U] PFC and the PFC watchdog are off on a port until configured; watchdog timers have no known
# default (reported as None when neither the port nor the global `default` commands set them).
DEFAULT_PFC_ON = False
DEFAULT_PFCWD_ENABLED = False

# [U] ECN/WRED threshold units (reference §2.2). Byte sizes of `kbytes`/`mbytes` are NOT settled in
# any primary source; 1024-based is assumed here (buffer memory is counted in binary units) so a
# byte figure exists for comparison, but every threshold also keeps its configured value and unit.
# `segments` and the time units have no byte size without the platform's cell/segment size.
UNIT_BYTES: dict[str, int | None] = {
    "bytes": 1,
    "kbytes": 1024,
    "mbytes": 1024 * 1024,
    "segments": None,
    "microseconds": None,
    "milliseconds": None,
}
PFCWD_ACTIONS = frozenset({"drop", "no-drop", "notify-only", "errdisable"})
TRUST_MODES = frozenset({"dscp", "cos", "disabled"})
QUEUE_KINDS = ("tx-queue", "uc-tx-queue", "mc-tx-queue")
QOS_INTERFACE_PREFIXES = ("Ethernet", "Port-Channel")
MAX_RANGE = 4096  # an interface or index range wider than this is refused
