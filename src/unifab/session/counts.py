"""Fabric-wide majorities kept as counters, so one device's change updates them in time proportional to its links.

The baseline (:func:`unifab.checks.context._baseline`) and the switch-link majorities of
:func:`unifab.checks.link.port_link_check` are "most common value, ties to the first seen". A counter
answers that exactly whenever the top count is unique; on a tie, or when a value that other fields are
projected through changes (the RoCE DSCP, the switch's RoCE TC, the CNP DSCP), the caller recomputes
from scratch. Every answer is therefore the one a full build would give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unifab.checks.context import DEFAULT_CNP_DSCP, DEFAULT_ROCE_DSCP, Baseline, NicLink, PortLink
from unifab.model import Port

__all__ = ["PORT_VALUES", "BaselineCounts", "Contribution", "PortCounts", "Tie", "ordered_port_values"]

Contribution = dict[str, Hashable | None]


class Tie(Exception):
    """Two values share the top count: only a full, ordered pass knows which one was seen first."""


def _top(counter: Counter[Any]) -> Any:
    """The unique most common value, ``None`` when empty; raises :class:`Tie` when the top is shared."""
    best = counter.most_common(2)
    if not best:
        return None
    if len(best) == 2 and best[0][1] == best[1][1]:
        raise Tie
    return best[0][0]


def _add(counters: dict[str, Counter[Any]], contribution: Contribution, sign: int) -> None:
    for name, value in contribution.items():
        if value is None:
            continue
        counter = counters.setdefault(name, Counter())
        counter[value] += sign
        if counter[value] <= 0:
            del counter[value]


@dataclass(frozen=True, slots=True)
class _Params:
    """Values other baseline fields are projected through."""

    roce_dscp: int
    switch_tc: int | None
    cnp_dscp: int


def _queue(port: Port, tc: int) -> Any:
    assert port.qos is not None
    return port.qos.queues.get(port.qos.tc_to_queue.get(tc, tc))


def _contribution(lk: NicLink, p: _Params) -> Contribution:
    """What one host link adds to each baseline counter, mirroring ``context._baseline`` field by field."""
    nic, port = lk.nic, lk.port
    nq, pq = nic.qos, port.qos
    out: Contribution = {"nic_mtu": nic.mtu, "switch_mtu": port.mtu}
    if nq is not None:
        out["overrides"] = nq.traffic_class
        out["cnp"] = nq.cnp_dscp
        out["nic_trust"] = nq.trust
        out["nic_pfc"] = nq.pfc_enabled
        if nq.trust == "dscp":
            out["nic_roce_prio"] = nq.dscp2prio.get(p.roce_dscp)
    if pq is not None:
        if pq.trust == "dscp":
            out["lossless"] = frozenset(d for d, tc in pq.dscp_to_tc.items() if tc in pq.pfc_enabled)
        out["switch_tc"] = pq.dscp_to_tc.get(p.roce_dscp)
        out["switch_trust"] = pq.trust
        out["pfcwd"] = pq.pfcwd
        out["switch_dscp_map"] = pq.dscp_map_name
        out["switch_pfc"] = pq.pfc_enabled
        if p.switch_tc is not None:
            q = _queue(port, p.switch_tc)
            if q is not None and q.ecn_enabled:
                out["wred"] = q.wred_profile
            if q is not None and q.ecn_min_bytes is not None and q.ecn_max_bytes is not None:
                out["ecn"] = (q.ecn_min_bytes, q.ecn_max_bytes)
        cnp_tc = pq.dscp_to_tc.get(p.cnp_dscp)
        if cnp_tc is not None:
            q = _queue(port, cnp_tc)
            if q is not None and q.scheduler_type == "STRICT":
                out["cnp_scheduler"] = q.scheduler
    return out


class BaselineCounts:
    """The fabric's baseline as counters over its host links, updated link by link."""

    def __init__(self, links: Iterable[NicLink], params: _Params) -> None:
        self._params = params
        self._counters: dict[str, Counter[Any]] = {}
        self._by_link: dict[str, Contribution] = {}
        self._n_links = 0
        self._n_overrides = 0
        for lk in links:
            self._put(lk)

    @classmethod
    def build(cls, links: Sequence[NicLink]) -> BaselineCounts:
        """Counters over ``links``, projected through the values they themselves settle on (a fixed point:
        the RoCE DSCP first, then the switch TC it maps to, then the CNP DSCP; a few passes at most)."""
        params = _Params(DEFAULT_ROCE_DSCP, None, DEFAULT_CNP_DSCP)
        for _ in range(4):
            counts = cls(links, params)
            settled = counts.settled_params()
            if settled is None or settled == params:
                return counts
            params = settled
        return counts

    def settled_params(self) -> _Params | None:
        """The projection values these counters imply (``None`` on a tie)."""
        c = self._counters.get
        try:
            dscp = self._roce_dscp()
            switch_tc = _top(c("switch_tc", Counter())) if dscp == self._params.roce_dscp else None
            cnp = _top(c("cnp", Counter()))
        except Tie:
            return None
        return _Params(dscp, switch_tc, DEFAULT_CNP_DSCP if cnp is None else cnp)

    def _put(self, lk: NicLink) -> None:
        c = _contribution(lk, self._params)
        self._by_link[lk.link.id] = c
        _add(self._counters, c, 1)
        self._n_links += 1
        self._n_overrides += c.get("overrides") is not None

    def _drop(self, link_id: str) -> None:
        c = self._by_link.pop(link_id)
        _add(self._counters, c, -1)
        self._n_links -= 1
        self._n_overrides -= c.get("overrides") is not None

    def replace(self, old: Iterable[NicLink], new: Iterable[NicLink]) -> None:
        for lk in old:
            self._drop(lk.link.id)
        for lk in new:
            self._put(lk)

    def baseline(self) -> Baseline | None:
        """The baseline now, or ``None`` when only a full build can tell (a tie, or a projection moved)."""
        c = self._counters.get
        try:
            dscp = self._roce_dscp()
            if dscp != self._params.roce_dscp:
                return None
            switch_tc = _top(c("switch_tc", Counter()))
            if switch_tc != self._params.switch_tc:
                return None
            cnp = _top(c("cnp", Counter()))
            cnp_dscp = DEFAULT_CNP_DSCP if cnp is None else cnp
            if cnp_dscp != self._params.cnp_dscp:
                return None
            fields = {
                name: _top(c(name, Counter()))
                for name in (
                    "nic_trust",
                    "switch_trust",
                    "cnp_scheduler",
                    "pfcwd",
                    "switch_dscp_map",
                    "ecn",
                    "nic_roce_prio",
                    "nic_pfc",
                    "nic_mtu",
                    "switch_pfc",
                    "switch_mtu",
                    "wred",
                )
            }
        except Tie:
            return None
        return Baseline(
            nic_trust=fields["nic_trust"],
            switch_trust=fields["switch_trust"],
            cnp_dscp=cnp_dscp,
            cnp_scheduler=fields["cnp_scheduler"],
            pfcwd=fields["pfcwd"],
            switch_dscp_map=fields["switch_dscp_map"],
            roce_ecn_thresholds=fields["ecn"],
            roce_dscp=dscp,
            nic_roce_prio=fields["nic_roce_prio"],
            nic_pfc=fields["nic_pfc"],
            nic_mtu=fields["nic_mtu"],
            switch_roce_tc=switch_tc,
            switch_pfc=fields["switch_pfc"],
            switch_mtu=fields["switch_mtu"],
            roce_wred_profile=fields["wred"] if switch_tc is not None else None,
        )

    def _roce_dscp(self) -> int:
        """``context._roce_dscp`` from the counters (raises :class:`Tie` where it would need the order)."""
        tclass = _top(self._counters.get("overrides", Counter()))
        if tclass is not None and 2 * self._n_overrides > self._n_links:
            return int(tclass) >> 2
        lossless = _top(self._counters.get("lossless", Counter()))
        candidates = sorted((lossless or frozenset()) - {DEFAULT_CNP_DSCP})
        if len(candidates) == 1:
            return int(candidates[0])
        return DEFAULT_ROCE_DSCP if tclass is None else int(tclass) >> 2


def _pfc(port: Port) -> tuple[int, ...] | None:
    return None if port.qos is None else tuple(sorted(port.qos.pfc_enabled))


# The switch↔switch majorities ``port_link_check`` takes, by the key it looks them up with.
PORT_VALUES: Mapping[str, Callable[[Port], Hashable | None]] = {
    "QOS-PFC-MISMATCH:pfc_enabled": _pfc,
    "LINK-SPEED:speed_mbps": lambda p: p.speed_mbps,
    "LINK-FEC:fec": lambda p: p.fec,
    "QOS-MTU:mtu": lambda p: p.mtu,
}


class PortCounts:
    """Per key of :data:`PORT_VALUES`, how many switch-link ends carry each value."""

    def __init__(self, links: Iterable[PortLink]) -> None:
        self._counters: dict[str, Counter[Any]] = {key: Counter() for key in PORT_VALUES}
        for pl in links:
            self._add(pl, 1)

    def _add(self, pl: PortLink, sign: int) -> None:
        for key, value in PORT_VALUES.items():
            for v in (value(pl.a), value(pl.b)):
                if v is None:
                    continue
                counter = self._counters[key]
                counter[v] += sign
                if counter[v] <= 0:
                    del counter[v]

    def replace(self, old: Iterable[PortLink], new: Iterable[PortLink]) -> None:
        for pl in old:
            self._add(pl, -1)
        for pl in new:
            self._add(pl, 1)

    def values(self) -> dict[str, object] | None:
        """Every key's majority, or ``None`` when a tie needs the ordered pass."""
        try:
            return {key: _top(counter) for key, counter in self._counters.items()}
        except Tie:
            return None


def ordered_port_values(links: Iterable[PortLink]) -> dict[str, object]:
    """The majorities exactly as ``port_link_check`` computes them (ties to the first seen, in link order)."""
    from unifab.checks.context import majority

    ordered = list(links)
    return {
        key: majority(v for pl in ordered for v in (value(pl.a), value(pl.b))) for key, value in PORT_VALUES.items()
    }
