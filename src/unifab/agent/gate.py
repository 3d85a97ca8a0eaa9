"""``unifab agent gate``: is this host ready to be given to a job? The check a scheduler runs before delivery.

One run: collect this host (:func:`unifab.collect.host_live.collect_host`) into a private temporary directory
within a total deadline, read it back with the bundle reader, run the checks a host can judge alone, judge the
job's environment (``--job-env``) against it, remove the directory, and answer **ready**, **not ready** (the
problems, the worst first) or **unknown** (could not judge: the collection failed or the deadline was hit before
anything blocking was found). Nothing is written outside the temporary directory and nothing is kept between
runs, so it is safe every few minutes (Slurm ``HealthCheckProgram``, a prolog, an NPD custom plugin).

**Bounded time.** Every command runs through :class:`DeadlineRunner`: its own process group, killed (the whole
group) when the run's deadline comes, and every command after that is not started; each kill is reported.
:func:`collect_host` also runs in a worker thread the gate waits for only until the deadline (plus a short
grace): a read that blocks in the kernel cannot hold the gate either.

**What is judged.** The registered checks in :data:`GATE_CHECKS` (host facts: GID, RoCE MTU, peer memory,
PCIe downgrade and ACS, DCBX and ETS, the job's traffic class and HCA list; the NIC↔leaf checks give nothing
without a leaf in the bundle), plus the gate's own (:data:`GATE_SPECS`): no RDMA NIC (or fewer than expected), a
NIC whose port is not ACTIVE, a NIC whose QoS differs from the intent (``--intent``, else the
``nvidia-spectrum-x`` preset) and the job's NCCL settings (:mod:`unifab.agent.job_env`). What could not be
collected (``INPUT-*``) is listed as not judged; it never blocks by itself.

**Severity.** Errors and criticals block; warnings block only with ``strict``. A problem is the node's (drain
it) or the job's (its settings do not fit this host: refuse the job, keep the node): :attr:`GateProblem.node`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unifab.agent.job_env import JOB_SPECS, JobEnv, inject_job, job_findings
from unifab.checks.gate_catalog import GATE_SPECS
from unifab.checks.runner import run_checks
from unifab.collect.host_live import HOSTNAME_CHARS, CommandResult, collect_host
from unifab.errors import UsageError
from unifab.intent import Device, Intent, parse_intent, resolve
from unifab.model import Fabric, Finding, Fix, Host, Nic, Severity, host_id
from unifab.profile import QosProfile
from unifab.render.nic_cli import NicFixes

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_INTENT",
    "GATE_CHECKS",
    "GATE_SPECS",
    "NPD_MAX_OUTPUT",
    "SLURM_REASON_MAX",
    "DeadlineRunner",
    "GateOptions",
    "GateProblem",
    "GateResult",
    "drain_argv",
    "npd_message",
    "reason_line",
    "run_gate",
    "sanitize_reason",
    "short_text",
]

DEFAULT_DEADLINE_S = 5.0
GRACE_S = 2.0  # past the deadline, how long the gate still waits for the collector (file copies) to return
NPD_MAX_OUTPUT = 80  # node-problem-detector's default pluginConfig.max_output_length (bytes)
SLURM_REASON_MAX = 100
DEFAULT_INTENT = "version: 1\npreset: nvidia-spectrum-x\n"

GATE_CHECKS = (
    "HOST-GID",
    "HOST-ROCE-MTU",
    "HOST-PEERMEM",
    "HOST-PCIE-DOWNGRADED",
    "HOST-ACS",
    "QOS-DCBX",
    "QOS-ETS",
    "QOS-JOB-TC",
    "TOPO-NCCL-HCA",
    "TOPO-PCIE-AFFINITY",
    # NIC↔leaf: judged when the bundle holds the leaf (silent without it)
    "QOS-TRUST",
    "QOS-PFC-MISMATCH",
    "QOS-PFC-LOSSY-ROCE",
    "QOS-DSCP-MAP",
    "QOS-TC-OVERRIDE",
    "QOS-GLOBAL-PAUSE",
    "QOS-MTU",
    "QOS-ECN-OFF",
    "QOS-DCQCN-OFF",
    "QOS-CNP",
    "QOS-CABLE-LEN",
    "TOPO-DEGRADED",
)


# --- bounded command running ------------------------------------------------------------------------------


@dataclass(slots=True)
class DeadlineRunner:
    """Runs each command (no shell) in its own process group with ``min(timeout, time left)``; at the deadline
    the group is killed and later commands are not started. ``killed`` and ``skipped`` say which."""

    deadline_at: float  # time.monotonic() value
    path: str | None = None  # PATH to search; None: this process's
    killed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        exe = shutil.which(argv[0], path=self.path)
        if exe is None:
            return CommandResult(None, not_found=True)
        shown = " ".join(argv)
        left = self.deadline_at - time.monotonic()
        if left <= 0:
            with self.lock:
                self.skipped.append(shown)
            return CommandResult(None, timed_out=True)
        env = dict(os.environ, LC_ALL="C")
        if self.path is not None:
            env["PATH"] = self.path
        try:
            proc = subprocess.Popen(  # argv from host_live's command tables, no shell
                [exe, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(None, error=exc.strerror or str(exc))
        try:
            out, err = proc.communicate(timeout=max(0.01, min(timeout, left)))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=0.5)  # a grandchild that left the group may hold the pipes: do not wait
            with self.lock:
                self.killed.append(shown)
            return CommandResult(None, timed_out=True)
        return CommandResult(proc.returncode, out, err)


# --- the result ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GateProblem:
    """A finding the gate judged, with whether it blocks and whose it is."""

    finding: Finding
    blocking: bool
    node: bool  # the node's problem (drain it); False: the job's settings do not fit this host

    @property
    def short(self) -> str:
        return short_text(self.finding)


@dataclass(frozen=True, slots=True)
class GateResult:
    host: str
    status: str  # "ready" | "not-ready" | "unknown"
    problems: tuple[GateProblem, ...]  # every finding, blocking ones first (worst first)
    checked: tuple[str, ...]  # check ids judged
    not_judged: tuple[str, ...]  # what could not be collected or read (INPUT-* findings), killed commands
    unknown_reason: str | None
    deadline_s: float
    elapsed_s: float
    nics: tuple[str, ...]

    @property
    def blocking(self) -> tuple[GateProblem, ...]:
        return tuple(p for p in self.problems if p.blocking)

    @property
    def exit_code(self) -> int:
        """0 ready, 1 not ready, 2 could not judge (node-problem-detector's OK / NonOK / Unknown)."""
        return {"ready": 0, "not-ready": 1}.get(self.status, 2)

    def drain_reason(self) -> str | None:
        """The node's first blocking problem, as a Slurm drain reason; None when only the job is at fault."""
        node = [p for p in self.blocking if p.node]
        return _line(node[0].short, f" ({node[0].finding.check})", SLURM_REASON_MAX) if node else None

    def to_json(self) -> dict[str, Any]:
        from unifab.report.findings_json import finding_doc

        return {
            "host": self.host,
            "status": self.status,
            "ready": self.status == "ready",
            "reason": reason_line(self),
            "deadline_s": self.deadline_s,
            "elapsed_s": round(self.elapsed_s, 3),
            "nics": list(self.nics),
            "checked": list(self.checked),
            "not_judged": list(self.not_judged),
            "unknown_reason": self.unknown_reason,
            "problems": [
                {"blocking": p.blocking, "node": p.node, "short": p.short, "finding": finding_doc(p.finding)}
                for p in self.problems
            ],
        }


@dataclass(frozen=True, slots=True)
class GateOptions:
    root: Path = Path("/")
    hostname: str | None = None
    deadline_s: float = DEFAULT_DEADLINE_S
    intent: Intent | None = None  # None: DEFAULT_INTENT
    job_env: JobEnv | None = None
    strict: bool = False
    expect_nics: int | None = None
    path: str | None = None  # PATH the commands are looked up on (tests); None: this process's


# --- messages ------------------------------------------------------------------------------------------


def sanitize_reason(text: str, limit: int = SLURM_REASON_MAX) -> str:
    """What a Slurm ``Reason=`` (or an NPD message) carries: :func:`unifab.render.scheduler.reason_text`."""
    from unifab.render.scheduler import reason_text

    return reason_text(text, limit)


def short_text(f: Finding) -> str:
    """A finding in a few words, for a one-line reason: device names without their entity prefixes."""
    ev = f.evidence.get("a", {}) if isinstance(f.evidence.get("a"), dict) else {}
    nic = str(ev.get("nic", ""))
    dev = nic.rsplit(":", 1)[-1] if nic.startswith("nic:") else ""
    if f.check == "HOST-ROCE-MTU" and dev:
        return f"{dev} RoCE MTU {ev.get('active_mtu')} < {ev.get('expected_active_mtu')}"
    if f.check == "HOST-PCIE-DOWNGRADED" and ev.get("speed_gts") is not None:
        what = dev or str(ev.get("gpu", "")).replace(f"gpu:{ev.get('device')}:", "GPU ")
        return (
            f"{what} PCIe {ev.get('speed_gts'):g}GT/s x{ev.get('width')} < "
            f"{ev.get('max_speed_gts'):g}GT/s x{ev.get('max_width')}"
        )
    if f.check == "HOST-PEERMEM":
        return f"{ev.get('device')}: nvidia_peermem not loaded (no GPUDirect RDMA)"
    if f.check.startswith("GATE-NIC-QOS") and dev:
        return f"{dev} ({ev.get('netdev')}) QoS vs intent: " + "; ".join(map(str, ev.get("problems", ())))
    text = f.message
    host = str(f.subject.get("device") or ev.get("device") or "")
    if host:
        text = text.replace(f"nic:{host}:", "").replace(f"gpu:{host}:", "GPU ").replace(f"host:{host}", host)
    return " ".join(text.split())


def _line(body: str, suffix: str, limit: int) -> str:
    """``unifab: <body> <suffix>`` in ``limit`` characters, the body cut (never the suffix: the check id)."""
    tail = sanitize_reason(suffix, limit // 2)
    room = limit - len("unifab: ") - (len(tail) + 1 if tail else 0)
    return sanitize_reason("unifab: " + sanitize_reason(body, max(room, 4)) + (" " + tail if tail else ""), limit)


def reason_line(result: GateResult, limit: int = SLURM_REASON_MAX) -> str:
    """The one line that says why the host is not ready (or that it is), at most ``limit`` characters."""
    if result.blocking:
        first = result.blocking[0]
        more = len(result.blocking) - 1
        return _line(first.short, (f" (+{more} more)" if more else "") + f" ({first.finding.check})", limit)
    if result.status == "unknown":
        return _line(f"cannot judge {result.host}: {result.unknown_reason}", "", limit)
    return _line(f"{result.host} ready ({len(result.checked)} checks, {len(result.nics)} RDMA NICs)", "", limit)


def npd_message(result: GateResult, limit: int = NPD_MAX_OUTPUT) -> str:
    """:func:`reason_line` in NPD's ``max_output_length`` (bytes; the text is ASCII, so bytes are characters)."""
    return reason_line(result, limit)


def drain_argv(host: str, reason: str) -> list[str]:
    """``scontrol update NodeName=<host> State=DRAIN Reason=<reason>`` as an argv (no shell), from the one
    scheduler builder (:func:`unifab.render.scheduler.drain_argvs`): the name validated, the reason sanitised."""
    from unifab.render.scheduler import drain_argvs

    return drain_argvs("slurm", [host], reason, SLURM_REASON_MAX)[0]


# --- judging -------------------------------------------------------------------------------------------


def _finding(check: str, severity: Severity, host: str, subject: dict[str, str], message: str, **extra: Any) -> Finding:
    return Finding(
        check=check,
        severity=severity,
        subject=subject,
        message=message,
        evidence={"a": {"device": host, **extra.pop("evidence", {})}},
        fix=tuple(extra.pop("fix", ())),
        impact={"summary": extra.pop("impact", "")},
        entities=(subject.get("id", host_id(host)),),
    )


def _roce(nic: Nic) -> bool:
    return nic.rdma_dev is not None and nic.link_layer != "InfiniBand"


def host_findings(host: Host, profile: QosProfile, expect_nics: int | None) -> list[Finding]:
    """The gate's own judgements of one host: RDMA NICs present and up, NIC QoS as the intent says."""
    out: list[Finding] = []
    rdma = sorted((n for n in host.nics.values() if n.rdma_dev is not None), key=lambda n: n.rdma_dev or "")
    if not rdma or (expect_nics is not None and len(rdma) < expect_nics):
        want = f" of the {expect_nics} expected" if expect_nics is not None else ""
        out.append(
            _finding(
                "GATE-NO-RDMA",
                Severity.ERROR,
                host.name,
                {"kind": "host", "id": host.id},
                f"{host.name}: {len(rdma)} RDMA NIC(s){want} ({', '.join(n.rdma_dev or '' for n in rdma) or 'none'})",
                evidence={"rdma_nics": [n.rdma_dev for n in rdma], "expected": expect_nics},
                impact="NCCL has fewer rails than the job expects, or none: it runs over TCP sockets or fails",
            )
        )
    for nic in rdma:
        if nic.port_state is not None and nic.port_state.upper() != "ACTIVE":
            out.append(
                _finding(
                    "GATE-NIC-DOWN",
                    Severity.ERROR,
                    host.name,
                    {"kind": "nic", "id": nic.id},
                    f"{nic.rdma_dev} ({nic.netdev}) port is {nic.port_state}",
                    evidence={"nic": nic.id, "netdev": nic.netdev, "port_state": nic.port_state},
                    fix=(NicFixes(nic).link_status(),),
                    impact="this rail carries nothing: NCCL fails to connect through it or runs on fewer rails",
                )
            )
        if _roce(nic):
            found = _nic_qos(host, nic, profile)
            if found is not None:
                out.append(found)
    return out


def _nic_qos(host: Host, nic: Nic, profile: QosProfile) -> Finding | None:
    problems: list[tuple[Severity, str, Fix | None]] = []
    fixes = NicFixes(nic)
    q = nic.qos
    if q is not None:
        if q.trust != "dscp":
            problems.append(
                (
                    Severity.ERROR,
                    f"trust {q.trust} not dscp",
                    fixes.trust("dscp", profile.roce_dscp, profile.roce_priority),
                )
            )
        if q.pfc_enabled != profile.lossless_priorities:
            problems.append(
                (
                    Severity.ERROR,
                    f"PFC on {sorted(q.pfc_enabled)} not {sorted(profile.lossless_priorities)}",
                    fixes.pfc(sorted(profile.lossless_priorities)),
                )
            )
        prio = q.dscp2prio.get(profile.roce_dscp)
        if q.trust == "dscp" and q.dscp2prio and prio != profile.roce_priority:
            problems.append(
                (
                    Severity.ERROR,
                    f"DSCP {profile.roce_dscp} -> prio {prio} not {profile.roce_priority}",
                    fixes.dscp2prio(profile.roce_dscp, profile.roce_priority),
                )
            )
        if q.traffic_class is not None and q.traffic_class >> 2 != profile.roce_dscp:
            problems.append(
                (
                    Severity.ERROR,
                    f"TOS override {q.traffic_class} (DSCP {q.traffic_class >> 2}) not DSCP {profile.roce_dscp}",
                    fixes.traffic_class(profile.roce_tclass),
                )
            )
        if profile.congestion_control == "dcqcn":
            off = [
                point
                for point, enabled in (("rp", q.ecn_rp_enabled), ("np", q.ecn_np_enabled))
                if enabled is not None and profile.roce_priority not in enabled
            ]
            if off:
                problems.append(
                    (
                        Severity.ERROR,
                        f"ECN/DCQCN off ({'/'.join(off)}) on prio {profile.roce_priority}",
                        fixes.dcqcn_enable(off, profile.roce_priority),
                    )
                )
    if nic.mtu is not None and nic.mtu < profile.host_mtu:
        problems.append((Severity.WARNING, f"MTU {nic.mtu} < {profile.host_mtu}", fixes.mtu(profile.host_mtu)))
    if not problems:
        return None
    severity = max((s for s, _, _ in problems), key=lambda s: s.rank)
    return _finding(
        "GATE-NIC-QOS",
        severity,
        host.name,
        {"kind": "nic", "id": nic.id},
        f"{nic.rdma_dev} ({nic.netdev}) QoS differs from the intent ({profile.name}): "
        + "; ".join(t for _, t, _ in problems),
        evidence={
            "nic": nic.id,
            "netdev": nic.netdev,
            "problems": [t for _, t, _ in problems],
            "intent": {
                "roce_dscp": profile.roce_dscp,
                "roce_priority": profile.roce_priority,
                "lossless_priorities": sorted(profile.lossless_priorities),
                "host_mtu": profile.host_mtu,
            },
        },
        fix=[fx for _, _, fx in problems if fx is not None],
        impact="the host end of the lossless RoCE class is not what the fabric runs: pauses on the wrong priority, "
        "RoCE in a lossy class or without congestion control",
    )


def _node_owned(f: Finding) -> bool:
    """The node's problem (drain it) unless it is about the job's settings."""
    if f.subject.get("kind") == "job" or f.check.startswith("GATE-JOB-"):
        return False
    ev = f.evidence.get("a")
    return not (f.check == "HOST-GID" and isinstance(ev, dict) and ev.get("jobs"))


def judge(fabric: Fabric, host: str, opts: GateOptions) -> tuple[list[Finding], list[str], list[Finding]]:
    """(findings, check ids judged, input findings) for ``host`` of ``fabric``."""
    intent = opts.intent if opts.intent is not None else parse_intent(DEFAULT_INTENT, "<default intent>")
    profile = resolve(intent, Device(host, "host"))
    fabric.qos_intent = profile  # the checks' baseline: this host's resolved intent, not the NICs' majority
    checked = list(GATE_CHECKS)
    findings: list[Finding] = []
    if opts.job_env is not None:
        inject_job(fabric, host, opts.job_env)
    findings += [f for f in run_checks(fabric, only=GATE_CHECKS) if not f.check.startswith("INPUT-")]
    h = fabric.hosts.get(host)
    if h is not None:
        findings += host_findings(h, profile, opts.expect_nics)
        checked += ["GATE-NO-RDMA", "GATE-NIC-DOWN", "GATE-NIC-QOS"]
        if opts.job_env is not None:
            findings += job_findings(h, opts.job_env, opts.root)
            checked += [s.id for s in JOB_SPECS]
    return findings, checked, list(fabric.input_findings)


def _order(problems: list[GateProblem]) -> list[GateProblem]:
    return sorted(
        problems,
        key=lambda p: (not p.blocking, -p.finding.severity.rank, not p.node, p.finding.sort_key()),
    )


def run_gate(opts: GateOptions) -> GateResult:
    """Collect, judge and answer; see the module docstring. Raises only :class:`UsageError` (bad arguments)."""
    started = time.monotonic()
    if not opts.deadline_s > 0:
        raise UsageError(f"--deadline must be a positive number of seconds, got {opts.deadline_s:g}")
    name = opts.hostname if opts.hostname is not None else socket.gethostname().split(".")[0]
    if not name or name in (".", "..") or not set(name) <= HOSTNAME_CHARS:
        raise UsageError(f"--hostname must be a plain host name (letters, digits, '-', '_', '.'), got {name!r}")
    if not opts.root.is_dir():
        raise UsageError(f"--root {opts.root} is not a directory")
    runner = DeadlineRunner(started + opts.deadline_s, opts.path)
    work = Path(tempfile.mkdtemp(prefix="unifab-gate-"))
    outcome: dict[str, Any] = {}

    def collect() -> None:
        try:
            outcome["report"] = collect_host(
                work / "bundle", root=opts.root, run=runner, hostname=name, timeout=opts.deadline_s
            )
        except BaseException as exc:  # reported as "could not judge", never a traceback
            outcome["error"] = exc

    worker = threading.Thread(target=collect, name="unifab-gate-collect", daemon=True)
    try:
        worker.start()
        worker.join(max(0.0, started + opts.deadline_s + GRACE_S - time.monotonic()))
        unknown: str | None = None
        if worker.is_alive():
            unknown = f"collection did not finish within the {opts.deadline_s:g} s deadline"
        elif "error" in outcome:
            exc = outcome["error"]
            unknown = f"collection failed: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
        findings: list[Finding] = []
        checked: list[str] = []
        inputs: list[Finding] = []
        nics: tuple[str, ...] = ()
        if unknown is None:
            from unifab.collect.bundle import load_bundle

            nics = tuple(outcome["report"].nics)
            findings, checked, inputs = judge(load_bundle(work / "bundle"), name, opts)
    finally:
        if worker.is_alive():  # blocked in a read; commands are refused by now: a last moment before the cleanup
            worker.join(0.5)
        shutil.rmtree(work, ignore_errors=True)
    cut = runner.killed + runner.skipped
    if cut and unknown is None:
        unknown = (
            f"deadline {opts.deadline_s:g} s hit: killed {', '.join(repr(c) for c in runner.killed) or 'nothing'}"
            + (f", {len(runner.skipped)} not started" if runner.skipped else "")
        )
    not_judged = [f"killed at the deadline: {c}" for c in runner.killed]
    not_judged += [f"not started (deadline): {c}" for c in runner.skipped]
    not_judged += [" ".join(f.message.split()) for f in inputs]
    problems = _order(
        [
            GateProblem(
                f,
                f.severity.rank >= Severity.ERROR.rank or (opts.strict and f.severity is Severity.WARNING),
                _node_owned(f),
            )
            for f in findings
        ]
    )
    status = "not-ready" if any(p.blocking for p in problems) else ("unknown" if unknown else "ready")
    return GateResult(
        host=name,
        status=status,
        problems=tuple(problems),
        checked=tuple(checked),
        not_judged=tuple(not_judged),
        unknown_reason=unknown,
        deadline_s=opts.deadline_s,
        elapsed_s=time.monotonic() - started,
        nics=nics,
    )
