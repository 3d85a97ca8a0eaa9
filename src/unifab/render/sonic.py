"""CONFIG_DB edits for a SONiC switch, as ``sonic-db-cli`` commands an operator can paste."""

from __future__ import annotations

from collections.abc import Iterable


def hset(key: str, field: str, value: str) -> str:
    return f"sonic-db-cli CONFIG_DB hset '{key}' '{field}' '{value}'"


def pfc_enable(port: str, priorities: Iterable[int]) -> str:
    return hset(f"PORT_QOS_MAP|{port}", "pfc_enable", ",".join(str(p) for p in sorted(priorities)))


def dscp_to_tc(map_name: str, dscp: int, tc: int) -> str:
    return hset(f"DSCP_TO_TC_MAP|{map_name}", str(dscp), str(tc))


def queue_wred(port: str, queue: int, profile: str) -> str:
    return hset(f"QUEUE|{port}|{queue}", "wred_profile", profile)


def port_mtu(port: str, value: int) -> str:
    return f"sudo config interface mtu {port} {value}"
