"""``unifab agent apply``: bring this host's NICs to the rendered NIC plan, safely.

1. **Load and validate** (:func:`load_plan`): the format and version, every name through the render gates
   (:mod:`unifab.render.host_script`), every command step's argvs recomputed from its setting
   (:data:`unifab.render.nic_plan.SETTINGS`) and compared to the plan's (so ``argv[0]`` is always one of
   :data:`~unifab.render.nic_plan.TOOLS`), every file step's path one of the shapes the script writes. A plan
   that fails is refused whole (exit 2) before anything runs.
2. **Record**: each step's read, the value before anything changes (a read that fails stops here: exit 1,
   nothing changed).
3. **Gate**: a step that would change and toggles the link (``flaps_link``) runs only on a drained node
   (``--drained``, or Slurm reports the node drained: :func:`slurm_drained`) or with ``--allow-link-flap``;
   otherwise exit 3 naming the step.
4. **Apply** step by step (only what differs), each read back at once; then **verify** every step again.
5. **Roll back** when a step fails or a read-back differs: the recorded values re-applied in reverse order
   with the same setting's writer, then read again and compared with the record (exit 1).

Every step is logged as one line (what, before, after, ok/failed) and the whole run as a JSON document
beside the plan (:func:`log_path`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from unifab.agent.plan_exec import HostIo, Io
from unifab.errors import ParseError, UnifabError, UsageError
from unifab.render import host_script as hs
from unifab.render import nic_mlx5
from unifab.render import nic_plan as np

__all__ = [
    "EXIT_APPLIED",
    "EXIT_BAD_PLAN",
    "EXIT_REFUSED",
    "EXIT_ROLLED_BACK",
    "LOG_FORMAT",
    "Outcome",
    "Plan",
    "PlanError",
    "Step",
    "apply_plan",
    "load_plan",
    "log_path",
    "same",
    "slurm_drained",
    "write_log",
]

# 3 stays the internal error of every command (cli.common.EXIT_INTERNAL); a refusal is its own code
EXIT_APPLIED, EXIT_ROLLED_BACK, EXIT_BAD_PLAN, EXIT_REFUSED = 0, 1, 2, 4
LOG_FORMAT = "unifab-apply-log/1"
MAX_PLAN_BYTES = 4 << 20


class PlanError(UsageError):
    """The plan cannot be used (exit 2); the message names the file and the step."""


@dataclass(frozen=True, slots=True)
class Step:
    id: str
    nic: np.PlanNic
    what: str
    setting: str
    expect: str
    flaps_link: bool
    arg: str | None = None
    read: tuple[tuple[str, ...], ...] = ()
    apply: tuple[tuple[str, ...], ...] = ()
    path: str | None = None
    compare: str = "text"
    pattern: str | None = None
    commit: tuple[str, str] | None = None  # (path, value) written after the file, e.g. bnxt_re cc/apply
    if_exists: bool = False

    @property
    def ctx(self) -> np.Ctx:
        return np.Ctx(self.nic.netdev, self.nic.rdma_dev, self.arg)


@dataclass(frozen=True, slots=True)
class Plan:
    path: Path
    host: str
    nics: tuple[np.PlanNic, ...]
    steps: tuple[Step, ...]


# --- loading -----------------------------------------------------------------------------------------------


def _req(d: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in d or not isinstance(d[key], kind) or (isinstance(d[key], bool) and kind is not bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise PlanError(f"{where}: '{key}' must be a {names}")
    return d[key]


def _argvs(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(
        isinstance(a, list) and a and all(isinstance(t, str) for t in a) for a in value
    ):
        raise PlanError(f"{where}: expected a list of argv lists of strings")
    return tuple(tuple(a) for a in value)


def load_plan(path: Path) -> Plan:
    """The plan at ``path``, validated; :class:`PlanError` naming the file and step otherwise."""
    try:
        raw = path.read_bytes()[: MAX_PLAN_BYTES + 1]
    except OSError as exc:
        raise PlanError(f"plan {path}: cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_PLAN_BYTES:
        raise PlanError(f"plan {path}: larger than {MAX_PLAN_BYTES >> 20} MiB")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise PlanError(f"plan {path}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PlanError(f"plan {path}: expected a JSON object")
    fmt = doc.get("format")
    if fmt != np.FORMAT:
        raise PlanError(f"plan {path}: format {fmt!r}; this unifab reads {np.FORMAT!r}")
    where = f"plan {path}"
    try:
        host = hs.host_name(_req(doc, "host", str, where))
        nics = {
            n.netdev: n for n in (_nic(e, f"{where}: nics[{i}]") for i, e in enumerate(_req(doc, "nics", list, where)))
        }
        steps = [_step(s, nics, f"{where}: steps[{i}]") for i, s in enumerate(_req(doc, "steps", list, where))]
    except PlanError:
        raise
    except UsageError as exc:
        raise PlanError(f"{where}: {exc}") from None
    ids = [s.id for s in steps]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise PlanError(f"{where}: step id {dup[0]!r} appears more than once")
    return Plan(path, host, tuple(nics.values()), tuple(steps))


def _nic(entry: Any, where: str) -> np.PlanNic:
    if not isinstance(entry, dict):
        raise PlanError(f"{where}: expected an object")
    rdma = entry.get("rdma_dev")
    pci = entry.get("pci_address")
    dialect = _req(entry, "dialect", str, where)
    if dialect not in (np.OFED, np.UPSTREAM, np.BNXT):
        raise PlanError(f"{where}: dialect {dialect!r}; known: {np.OFED}, {np.UPSTREAM}, {np.BNXT}")
    return np.PlanNic(
        netdev=hs.netdev(_req(entry, "netdev", str, where)),
        rdma_dev=hs.rdma_dev(rdma) if isinstance(rdma, str) else None,
        driver=str(entry.get("driver", "")),
        dialect=dialect,
        cable_m=0,
        pci_address=nic_mlx5.pci_bdf(pci) if isinstance(pci, str) else None,
    )


def _step(d: Any, nics: dict[str, np.PlanNic], where: str) -> Step:
    if not isinstance(d, dict):
        raise PlanError(f"{where}: expected an object")
    sid = _req(d, "id", str, where)
    if not re.fullmatch(r"[A-Za-z0-9_.:,-]{1,120}", sid):
        raise PlanError(f"{where}: step id {sid!r}: expected letters, digits and _.:,-")
    where = f"{where.rsplit(':', 1)[0]}: step {sid}"
    nic = nics.get(_req(d, "nic", str, where))
    if nic is None:
        raise PlanError(f"{where}: nic {d['nic']!r} is not one of the plan's nics")
    setting = _req(d, "setting", str, where)
    expect = _req(d, "expect", str, where)
    flaps = _req(d, "flaps_link", bool, where)
    what = str(d.get("what", setting))[:80]
    if setting == np.FILE:
        return _file_step(d, sid, nic, what, expect, flaps, where)
    s = np.SETTINGS.get(setting)
    if s is None:
        raise PlanError(
            f"{where}: setting {setting!r} is not one unifab applies; known: file, {', '.join(np.SETTINGS)}"
        )
    read, apply = _argvs(d.get("read"), f"{where}: read"), _argvs(d.get("apply"), f"{where}: apply")
    for argv in (*read, *apply):
        if argv[0] not in np.TOOLS:
            raise PlanError(f"{where}: {argv[0]!r} is not an allowed tool ({', '.join(sorted(np.TOOLS))})")
    arg = d.get("arg")
    step = Step(sid, nic, what, setting, expect, flaps, arg if isinstance(arg, str) else None, read, apply)
    try:
        want_read, want_apply = s.read(step.ctx), s.write(step.ctx, expect, None)
    except UnifabError as exc:
        raise PlanError(f"{where}: {exc}") from None
    if [list(a) for a in read] != want_read or [list(a) for a in apply] != want_apply:
        raise PlanError(f"{where}: the read/apply commands are not those of setting {setting} for {expect!r}")
    if flaps != s.flaps_link:
        raise PlanError(f"{where}: flaps_link must be {str(s.flaps_link).lower()} for setting {setting}")
    return step


def _file_step(d: dict[str, Any], sid: str, nic: np.PlanNic, what: str, expect: str, flaps: bool, where: str) -> Step:
    path = _req(d, "path", str, where)
    if not np.file_path_ok(path, nic):
        raise PlanError(f"{where}: path {path!r} is not a sysfs/configfs file unifab writes for {nic.netdev}")
    if not np.file_value_ok(expect):
        raise PlanError(f"{where}: value {expect!r}: expected a number or a short word")
    compare = d.get("compare", "text")
    if compare not in ("text", "int"):
        raise PlanError(f"{where}: compare {compare!r}: expected text or int")
    pattern = d.get("pattern")
    if pattern is not None:
        try:
            if not isinstance(pattern, str) or re.compile(pattern).groups != 1:
                raise re.error("one group")
        except re.error:
            raise PlanError(f"{where}: pattern must be a regular expression with one group") from None
    commit = d.get("commit")
    pair: tuple[str, str] | None = None
    if commit is not None:
        cpath, cvalue = _req(commit, "path", str, where), _req(commit, "value", str, where)
        if not np.file_path_ok(cpath, nic, commit=True) or not np.file_value_ok(cvalue):
            raise PlanError(f"{where}: commit {cpath!r} is not a file unifab writes after a change")
        pair = (cpath, cvalue)
    return Step(
        sid,
        nic,
        what,
        np.FILE,
        expect,
        flaps,
        path=path,
        compare=compare,
        pattern=pattern,
        commit=pair,
        if_exists=bool(d.get("if_exists", False)),
    )


# --- the drain check ---------------------------------------------------------------------------------------


def slurm_drained(node: str, timeout: float = 5.0) -> bool:
    """Whether Slurm reports ``node`` drained: the DRAIN flag and no job running on it (``IDLE+DRAIN``,
    ``DOWN+DRAIN``; ``MIXED+DRAIN`` is still draining). No scontrol, no answer or an error: not drained."""
    argv = ["scontrol", "-o", "show", "node", hs.host_name(node)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    m = re.search(r"\bState=(\S+)", done.stdout) if done.returncode == 0 else None
    if m is None:
        return False
    flags = set(re.split(r"[+*~#!%$@^-]", m.group(1).upper()))
    return ("DRAIN" in flags and bool(flags & {"IDLE", "DOWN"})) or "DRAINED" in flags


# --- running -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Record:
    step: Step
    before: str | None = None  # None: the file did not exist
    after: str | None = None
    action: str = "unchanged"  # unchanged | skipped | would-change | applied | failed | rolled-back | not-restored
    error: str | None = None
    created: list[str] = field(default_factory=list)

    def line(self) -> str:
        ok = {"failed": "failed", "not-restored": "failed", "would-change": "would change"}.get(self.action, "ok")
        tail = f" ({self.action})" if self.action not in ("applied", "failed") else ""
        err = f": {self.error}" if self.error else ""
        change = f"{_show(self.before)} -> {_show(self.after)}"
        return f"unifab-apply: {self.step.id}: {self.step.what}: {change} {ok}{tail}{err}"

    def doc(self) -> dict[str, Any]:
        return {
            "id": self.step.id,
            "nic": self.step.nic.netdev,
            "what": self.step.what,
            "expect": self.step.expect,
            "before": self.before,
            "after": self.after,
            "action": self.action,
            "error": self.error,
        }


def _show(value: str | None) -> str:
    return "(absent)" if value is None else repr(value)


@dataclass(slots=True)
class Outcome:
    code: int
    message: str
    lines: list[str]
    log: dict[str, Any]


class _StepFailed(Exception):
    pass


class _Runner:
    def __init__(self, io: Io, timeout: float) -> None:
        self.io, self.timeout = io, timeout

    def read(self, step: Step) -> str | None:
        if step.setting == np.FILE:
            assert step.path is not None
            text = self.io.read_file(step.path)
            if text is None:
                return None
            value = text.strip()
            if step.pattern is not None and (m := re.fullmatch(step.pattern, value)):
                value = m.group(1)
            return value
        outs = []
        for argv in step.read:
            done = self.io.run(argv, self.timeout)
            if done.returncode != 0:
                raise _StepFailed(f"{' '.join(argv)}: {done.reason}")
            outs.append(done.stdout)
        try:
            return np.SETTINGS[step.setting].parse(step.ctx, outs)
        except (ParseError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise _StepFailed(f"{' '.join(step.read[0])}: output not understood: {exc}") from None

    def write(self, rec: _Record, value: str | None, current: str | None) -> None:
        step = rec.step
        if step.setting == np.FILE:
            assert step.path is not None
            try:
                if value is None:
                    self.io.remove_file(step.path, rec.created)
                else:
                    rec.created += self.io.write_file(step.path, value + "\n")
                if step.commit is not None:
                    self.io.write_file(step.commit[0], step.commit[1] + "\n")
            except OSError as exc:
                raise _StepFailed(f"write {step.path}: {exc.strerror or exc}") from None
            return
        if value is None:
            raise np.NotWritable("no recorded value")
        argvs = np.SETTINGS[step.setting].write(step.ctx, value, current)
        for argv in argvs:
            done = self.io.run(argv, self.timeout)
            if done.returncode != 0:
                raise _StepFailed(f"{' '.join(argv)}: {done.reason}")


def same(step: Step, a: str | None, b: str | None) -> bool:
    """Whether two read values are the same setting (``int`` steps compare numbers: ``0x1a`` is ``26``)."""
    if a is None or b is None:
        return a is b
    if step.compare == "int":
        try:
            return int(a, 0) == int(b, 0)
        except ValueError:
            pass
    return a.strip() == b.strip()


def apply_plan(
    plan: Plan,
    *,
    io: Io | None = None,
    dry_run: bool = False,
    drained: bool | Callable[[], bool] = False,
    allow_link_flap: bool = False,
    timeout: float = 30.0,
) -> Outcome:
    """Record, gate, apply, verify and (on failure) roll back ``plan``; see the module docstring."""
    runner = _Runner(io or HostIo(), timeout)
    started = _now()
    recs = [_Record(s) for s in plan.steps]
    lines: list[str] = []

    def done(code: int, result: str, message: str, rollback: list[_Record] | None = None) -> Outcome:
        log = {
            "format": LOG_FORMAT,
            "plan": str(plan.path),
            "host": plan.host,
            "started": started,
            "finished": _now(),
            "dry_run": dry_run,
            "result": result,
            "exit_code": code,
            "message": message,
            "steps": [r.doc() for r in recs],
            "rollback": [r.doc() for r in rollback or []],
        }
        return Outcome(code, message, lines, log)

    for rec in recs:  # 1. record
        try:
            rec.before = rec.after = runner.read(rec.step)
        except _StepFailed as exc:
            rec.action, rec.error = "failed", f"cannot read the current value: {exc}"
            lines.append(rec.line())
            return done(EXIT_ROLLED_BACK, "not-started", f"step {rec.step.id}: {rec.error}; nothing was changed")
        if rec.before is None and rec.step.if_exists:
            rec.action = "skipped"
    todo = [r for r in recs if r.action != "skipped" and not same(r.step, r.before, r.step.expect)]
    flapping = [r for r in todo if r.step.flaps_link]
    gate = bool(flapping) and not dry_run and not allow_link_flap  # 2. gate
    if gate and not (drained() if callable(drained) else drained):
        s = flapping[0].step
        msg = (
            f"refused: step {s.id} ({s.what} {_show(flapping[0].before)} -> {s.expect!r}) toggles the link of "
            f"{s.nic.netdev}; drain the node first (--drained, or Slurm DRAIN) or pass --allow-link-flap"
        )
        return done(EXIT_REFUSED, "refused", msg)
    if dry_run:
        for rec in recs:
            if rec in todo:
                rec.action, rec.after = "would-change", rec.step.expect
            lines.append(rec.line())
        return done(EXIT_APPLIED, "dry-run", f"dry run: {len(todo)} of {len(recs)} step(s) would change")
    applied: list[_Record] = []
    failure: str | None = None
    for rec in recs:  # 3. apply, each read back at once
        if rec not in todo:
            lines.append(rec.line())
            continue
        applied.append(rec)
        try:
            runner.write(rec, rec.step.expect, rec.before)
            rec.after = runner.read(rec.step)
        except (_StepFailed, np.NotWritable) as exc:
            rec.action, rec.error = "failed", str(exc)
            failure = f"step {rec.step.id} failed: {exc}"
        else:
            if same(rec.step, rec.after, rec.step.expect):
                rec.action = "applied"
            else:
                rec.action, rec.error = "failed", f"read back {_show(rec.after)}, expected {rec.step.expect!r}"
                failure = f"step {rec.step.id}: {rec.error}"
        lines.append(rec.line())
        if failure:
            break
    if failure is None:  # 4. verify everything again (a later step may have moved an earlier one)
        for rec in recs:
            if rec.action == "skipped":
                continue
            try:
                now = runner.read(rec.step)
            except _StepFailed as exc:
                failure = f"verification of step {rec.step.id}: {exc}"
                break
            if not same(rec.step, now, rec.step.expect):
                failure = f"verification of step {rec.step.id}: reads {_show(now)}, expected {rec.step.expect!r}"
                break
    if failure is None:
        return done(EXIT_APPLIED, "applied", f"applied and verified: {len(applied)} of {len(recs)} step(s) changed")
    lines.append(f"unifab-apply: {failure}; rolling back {len(applied)} step(s)")
    rollback = _roll_back(runner, applied, lines)
    bad = [r for r in rollback if r.action == "not-restored"]
    tail = f"; NOT restored: {', '.join(r.step.id for r in bad)}" if bad else "; the host is as it was"
    return done(EXIT_ROLLED_BACK, "rolled-back", f"{failure}; rolled back{tail}", rollback)


def _roll_back(runner: _Runner, applied: Sequence[_Record], lines: list[str]) -> list[_Record]:
    out: list[_Record] = []
    for rec in reversed(applied):
        back = _Record(rec.step, created=rec.created)
        try:
            back.before = runner.read(rec.step)
        except _StepFailed:
            back.before = rec.after
        try:
            if not same(rec.step, back.before, rec.before):
                runner.write(back, rec.before, back.before)
        except (_StepFailed, np.NotWritable) as exc:
            back.error = str(exc)
        out.append(back)
    for back, rec in zip(out, reversed(applied), strict=True):  # every step restored, read again after all
        try:
            back.after = runner.read(rec.step)
        except _StepFailed as exc:
            back.error = back.error or str(exc)
        ok = back.error is None and same(rec.step, back.after, rec.before)
        back.action = "rolled-back" if ok else "not-restored"
        if not ok and back.error is None:
            back.error = f"reads {_show(back.after)}, recorded {_show(rec.before)}"
        lines.append(back.line())
    return out


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_path(plan_path: Path, when: datetime | None = None) -> Path:
    """Where the run's log goes: beside the plan, ``nic-apply-<UTC time>.json`` (one per run, never overwritten)."""
    stamp = (when or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    return plan_path.parent / f"nic-apply-{stamp}.json"


def write_log(path: Path, log: dict[str, Any]) -> None:
    """The log, written to a temporary file beside ``path`` and renamed into place."""
    fd, tmp = tempfile.mkstemp(prefix=".nic-apply.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(log, f, indent=2)
            f.write("\n")
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
