"""The job environment ``unifab agent gate --job-env FILE`` judges: ``KEY=VALUE`` lines, strictly read.

A scheduler hands the gate the environment a job will run with (``NCCL_IB_HCA``, ``NCCL_IB_GID_INDEX``,
``NCCL_IB_TC``, ``NCCL_SOCKET_IFNAME``, ...). The file is read the way ``systemd``'s ``EnvironmentFile=`` and a
shell's ``export`` lines are written: blank lines and ``#`` comments are skipped, an ``export`` prefix is allowed,
a value may be wrapped in one pair of matching single or double quotes (removed; nothing inside is expanded).

Unlike :func:`unifab.parse.sched.nccl_env.parse_env` (which reads what ``env`` dumped and is lenient about
continuation lines), a gate refuses what it cannot read for sure: any other line, a bad name, an unclosed quote or
a variable given twice is a :class:`~unifab.errors.UsageError` naming the file and the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unifab.checks.gate_catalog import JOB_SPECS
from unifab.errors import UsageError
from unifab.model import Fabric, Finding, Host, Job, Severity
from unifab.parse.sched.nccl_env import NcclDeviceList, nccl_settings

__all__ = [
    "JOB_SPECS",
    "MAX_JOB_ENV_BYTES",
    "JobEnv",
    "inject_job",
    "job_findings",
    "job_id",
    "load_job_env",
    "parse_job_env",
]

MAX_JOB_ENV_BYTES = 1 << 20  # a job's environment, not a log: anything larger is not what was meant
_LINE = re.compile(r"^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


@dataclass(frozen=True, slots=True)
class JobEnv:
    """The variables of a job environment file and the line each was set on (findings name it)."""

    source: str
    values: dict[str, str]
    lines: dict[str, int]

    def where(self, key: str) -> str:
        """``FILE:LINE`` of ``key`` (just ``FILE`` when it is not set there)."""
        line = self.lines.get(key)
        return self.source if line is None else f"{self.source}:{line}"


def _unquote(value: str, where: str) -> str:
    value = value.strip()
    if value[:1] in ("'", '"'):
        quote = value[0]
        if len(value) < 2 or not value.endswith(quote) or quote in value[1:-1]:
            raise UsageError(f"{where}: expected a value closed by its {quote} quote, got {value[:40]!r}")
        return value[1:-1]
    if any(c in value for c in "'\"`$\\"):
        raise UsageError(f"{where}: expected a plain value (quote it whole, no $ or backslash), got {value[:40]!r}")
    return value


def parse_job_env(text: str, source: str = "<job-env>") -> JobEnv:
    """Read ``KEY=VALUE`` lines; see the module docstring for what is accepted."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r").strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source}:{number}"
        if "\0" in line:
            raise UsageError(f"{where}: expected KEY=VALUE text, got a NUL byte")
        m = _LINE.match(line)
        if m is None:
            raise UsageError(f"{where}: expected KEY=VALUE (KEY: letters, digits, '_'), got {line[:40]!r}")
        key = m[1]
        if key in values:
            raise UsageError(f"{where}: {key} is set again (first on line {lines[key]}); give each variable once")
        values[key] = _unquote(m[2], where)
        lines[key] = number
    return JobEnv(source, values, lines)


def load_job_env(path: Path) -> JobEnv:
    """:func:`parse_job_env` of a file (``/dev/stdin`` and process substitutions work too), bounded in size."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_JOB_ENV_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--job-env {path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_JOB_ENV_BYTES:
        raise UsageError(f"--job-env {path}: larger than {MAX_JOB_ENV_BYTES} bytes; expected KEY=VALUE lines")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: expected UTF-8 text") from None
    return parse_job_env(text, str(path))


# --- the job's NCCL settings against this host -----------------------------------------------------------


_FAMILIES = ("AF_INET", "AF_INET6")


def job_id(env: JobEnv) -> str:
    """``job:slurm:<SLURM_JOB_ID>`` when the file says so, else ``job:gate:job-env``."""
    jid = env.values.get("SLURM_JOB_ID", "")
    return f"job:slurm:{jid}" if jid.isdigit() else "job:gate:job-env"


def inject_job(fabric: Fabric, host: str, env: JobEnv) -> Job:
    """The job as the fabric's only job, on ``host``: the registered job checks (QOS-JOB-TC, HOST-GID with the
    job's NCCL_IB_GID_INDEX, TOPO-NCCL-HCA) then judge its settings like any job's."""
    s = nccl_settings(env.values)
    jid = job_id(env)
    job = Job(
        jid,
        env.values.get("SLURM_JOB_NAME") or Path(env.source).name,
        (host,),
        nccl_ib_tc=s.ib_tc,
        nccl_ib_sl=s.ib_sl,
        nccl_ib_hca=env.values.get("NCCL_IB_HCA") or None,
        nccl_ib_gid_index=s.ib_gid_index,
        env_known=True,
    )
    fabric.jobs = {jid: job}
    return job


def _job_finding(check: str, env: JobEnv, keys: Sequence[str], problems: list[str], **evidence: Any) -> Finding:
    jid = job_id(env)
    where = ", ".join(env.where(k) for k in keys if k in env.lines) or env.source
    return Finding(
        check=check,
        severity=Severity.ERROR,
        subject={"kind": "job", "id": jid},
        message=f"{'; '.join(problems)} ({where})",
        evidence={"a": {"job": jid, "file": where, **{k: env.values.get(k) for k in keys}, **evidence}},
        impact={"summary": "the job's NCCL settings do not fit this host: it fails at init or runs on fewer rails"},
        entities=(jid,),
    )


def _hca_problems(host: Host, hca: NcclDeviceList) -> tuple[list[str], list[str]]:
    """(problems, devices selected) of an NCCL_IB_HCA list on this host."""
    nics = {n.rdma_dev: n for n in host.nics.values() if n.rdma_dev is not None}
    problems = []
    if not hca.exclude:
        for d in hca.devices:
            hit = [dev for dev in nics if (dev == d.name if hca.exact else dev.startswith(d.name))]
            if not hit:
                problems.append(
                    f"NCCL_IB_HCA names {d.name}, which this host does not have ({', '.join(sorted(nics))})"
                )
            elif d.port is not None and d.port != 1:
                problems.append(f"NCCL_IB_HCA asks for {d.name} port {d.port}; this host's RDMA ports are port 1")
    selected = sorted(dev for dev in nics if hca.selects(dev, 1))
    if not selected:
        problems.append(f"NCCL_IB_HCA={hca.raw} selects no RDMA device of this host")
    down = [d for d in selected if (s := nics[d].port_state) is not None and s.upper() != "ACTIVE"]
    if down:
        problems.append(f"NCCL_IB_HCA selects {', '.join(down)}, whose port is not ACTIVE")
    return problems, selected


def _gid_problems(host: Host, index: int, family: str, hca: NcclDeviceList | None) -> list[str]:
    problems = []
    for nic in sorted(host.nics.values(), key=lambda n: n.rdma_dev or n.netdev):
        if nic.rdma_dev is None or nic.link_layer == "InfiniBand" or not nic.gids:
            continue
        if hca is not None and not hca.selects(nic.rdma_dev, 1):
            continue
        gid = next((g for g in nic.gids if g.index == index and g.port == 1), None)
        if gid is None or gid.version != "v2" or gid.gid.lower().startswith("fe80:"):
            continue  # missing, v1 or link-local: HOST-GID says so
        if family == "AF_INET" and gid.ipv4 is None:
            problems.append(f"{nic.rdma_dev} GID {index} is IPv6 {gid.gid}, not the IPv4 GID AF_INET needs")
        elif family == "AF_INET6" and gid.ipv4 is not None:
            problems.append(f"{nic.rdma_dev} GID {index} is IPv4 {gid.ipv4}, not an IPv6 GID (AF_INET6)")
    return problems


def _interfaces(root: Path) -> dict[str, str | None]:
    """Network interfaces of ``root``'s /sys/class/net and their operstate (None when it cannot be read)."""
    base = root / "sys" / "class" / "net"
    found: dict[str, str | None] = {}
    try:
        names = sorted(p.name for p in base.iterdir())
    except OSError:
        return found
    for name in names:
        try:
            found[name] = (base / name / "operstate").read_text(errors="replace").strip() or None
        except OSError:
            found[name] = None
    return found


def job_findings(host: Host, env: JobEnv, root: Path) -> list[Finding]:
    """The job's NCCL settings against this host, beyond what the registered job checks judge."""
    s = nccl_settings(env.values)
    out: list[Finding] = []
    problems = list(s.problems)
    family = env.values.get("NCCL_IB_ADDR_FAMILY", "AF_INET")
    if family not in _FAMILIES:
        problems.append(f"NCCL_IB_ADDR_FAMILY={family!r} is neither AF_INET nor AF_INET6")
    if problems:
        keys = [k for k in env.values if k.startswith("NCCL_")]
        out.append(_job_finding("GATE-JOB-ENV", env, keys, problems))
    if s.ib_hca is not None:
        hca_problems, selected = _hca_problems(host, s.ib_hca)
        if hca_problems:
            out.append(_job_finding("GATE-JOB-HCA", env, ["NCCL_IB_HCA"], hca_problems, selected=selected))
    if s.ib_gid_index is not None and family in _FAMILIES:
        gid_problems = _gid_problems(host, s.ib_gid_index, family, s.ib_hca)
        if gid_problems:
            keys = ["NCCL_IB_GID_INDEX", "NCCL_IB_ADDR_FAMILY"]
            out.append(_job_finding("GATE-JOB-GID", env, keys, gid_problems, family=family))
    if s.socket_ifname is not None:
        ifaces = _interfaces(root)
        chosen = [n for n in ifaces if s.socket_ifname.selects(n)]
        if not chosen:
            shown = ", ".join(ifaces) or "none"
            msg = f"NCCL_SOCKET_IFNAME={s.socket_ifname.raw} selects no interface of this host ({shown})"
            out.append(_job_finding("GATE-JOB-IFNAME", env, ["NCCL_SOCKET_IFNAME"], [msg]))
        elif all(ifaces[n] is not None and ifaces[n] not in ("up", "unknown") for n in chosen):
            states = ", ".join(f"{n} {ifaces[n]}" for n in chosen)
            msg = f"NCCL_SOCKET_IFNAME={s.socket_ifname.raw} selects only interfaces that are not up ({states})"
            out.append(_job_finding("GATE-JOB-IFNAME", env, ["NCCL_SOCKET_IFNAME"], [msg]))
    return out
