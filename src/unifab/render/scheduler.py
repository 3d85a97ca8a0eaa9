"""Drain and resume commands in each scheduler's own language, as argv lists: one builder for the change
waves (``unifab plan-change``) and the health engine's incident actions.

Slurm: ``scontrol update NodeName=<hostlist> State=DRAIN Reason=<why>`` (running jobs finish; new ones stay off),
``State=RESUME`` after. Kubernetes: ``kubectl cordon <node>`` keeps new pods off, ``kubectl drain <node>
--ignore-daemonsets --delete-emptydir-data`` evicts the running ones so their controllers reschedule them
(DaemonSet pods cannot be evicted, emptyDir data is lost by design), ``kubectl uncordon`` after.

Every name passes :func:`unifab.render.host_script.host_name` (a :class:`~unifab.errors.UsageError` for one that
is not a host name); a reason is made one line of printable ASCII (:func:`reason_text`), device text may hold anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from unifab.parse.sched import hostlist
from unifab.render.host_script import host_name

__all__ = ["REASON_MAX", "SCHEDULERS", "drain_argvs", "reason_text", "resume_argvs"]

SCHEDULERS = ("slurm", "kubernetes")
REASON_MAX = 200


def reason_text(text: str, limit: int = REASON_MAX) -> str:
    """One line of plain printable ASCII, at most ``limit`` characters (a Slurm ``Reason=``): whitespace runs
    become one space, control characters and non-ASCII become ``?``, a longer text ends in ``...``."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in " ".join(text.split()))
    return clean if len(clean) <= limit else clean[: limit - 3].rstrip() + "..."


def _names(hosts: Sequence[str]) -> list[str]:
    return [host_name(h) for h in dict.fromkeys(hosts)]


def drain_argvs(scheduler: str, hosts: Sequence[str], reason: str, limit: int = REASON_MAX) -> list[list[str]]:
    """The commands that take ``hosts`` out of scheduling (none for no host); ``limit``: of Slurm's reason."""
    names = _names(hosts)
    if not names:
        return []
    if scheduler == "slurm":
        nodes = f"NodeName={hostlist.compress(names, sort=True)}"
        return [["scontrol", "update", nodes, "State=DRAIN", f"Reason={reason_text(reason, limit)}"]]
    if scheduler != "kubernetes":
        raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    return [["kubectl", "cordon", n] for n in names] + [
        ["kubectl", "drain", n, "--ignore-daemonsets", "--delete-emptydir-data"] for n in names
    ]


def resume_argvs(scheduler: str, hosts: Sequence[str]) -> list[list[str]]:
    """The commands that put ``hosts`` back into scheduling."""
    names = _names(hosts)
    if not names:
        return []
    if scheduler == "slurm":
        return [["scontrol", "update", f"NodeName={hostlist.compress(names, sort=True)}", "State=RESUME"]]
    if scheduler != "kubernetes":
        raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    return [["kubectl", "uncordon", n] for n in names]
