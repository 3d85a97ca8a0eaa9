"""``unifab agent gate``: the check before delivery a scheduler runs (Slurm health check or prolog, an NPD plugin).

Exit codes (every format): 0 ready, 1 not ready, 2 could not judge (collection failed, the deadline was hit with
nothing blocking found) or unusable arguments, 3 internal error. They are node-problem-detector's OK, NonOK and
Unknown. Only typer is imported here; the gate itself is imported when the command runs.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from unifab.cli.common import fail

if TYPE_CHECKING:
    from unifab.agent.gate import GateResult

__all__ = ["GateFormat", "register"]

DRAIN_TIMEOUT_S = 10.0


class GateFormat(enum.StrEnum):
    TEXT = "text"
    SLURM = "slurm"
    NPD = "npd"
    JSON = "json"


def _usage(fmt: GateFormat, message: str) -> NoReturn:
    """An unusable argument: one ``unifab: error:`` line; under NPD also the (cut) message on stdout, which is
    all the node-problem-detector shows, with exit 2 (Unknown)."""
    if fmt is GateFormat.NPD:
        from unifab.agent.gate import NPD_MAX_OUTPUT, sanitize_reason

        sys.stdout.write(sanitize_reason(f"unifab: error: {message}", NPD_MAX_OUTPUT) + "\n")
        sys.stdout.flush()
    fail(message)


def _text(result: GateResult) -> str:
    from unifab.agent.gate import GATE_SPECS, reason_line
    from unifab.report.text import display

    gate_ids = {s.id for s in GATE_SPECS}
    by_check: dict[str, list[str]] = {}
    for p in result.problems:
        word = "FAIL" if p.blocking else p.finding.severity.value
        by_check.setdefault(p.finding.check, []).append(f"{word}: {p.short}")
    lines = [f"unifab agent gate: {result.host}, {len(result.nics)} RDMA NICs, {result.elapsed_s:.1f} s"]
    width = max((len(c) for c in result.checked), default=10)
    for check in result.checked:
        rows = by_check.get(check)
        if not rows:
            lines.append(f"  {check:<{width}}  ok")
        for row in rows or ():
            lines.append(f"  {check:<{width}}  {row}")
    for check in sorted(set(by_check) - set(result.checked) - gate_ids):
        lines.extend(f"  {check:<{width}}  {row}" for row in by_check[check])
    for what in result.not_judged:
        lines.append(f"  not judged: {what}")
    lines.append(f"{result.status.upper()}: {reason_line(result)}")
    return "\n".join(display(line) for line in lines)


def _drain(result: GateResult) -> None:
    """``scontrol update ... State=DRAIN`` for the node's first blocking problem (not for the job's)."""
    import subprocess

    from unifab.agent.gate import drain_argv
    from unifab.errors import UsageError

    reason = result.drain_reason()
    if reason is None:
        return
    try:
        argv = drain_argv(result.host, reason)
    except UsageError as exc:
        sys.stderr.write(f"unifab: error: not drained: {exc}\n")
        return
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=DRAIN_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        sys.stderr.write(f"unifab: error: {argv[0]} {argv[1]} failed: {exc}\n")
        return
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        sys.stderr.write(f"unifab: error: scontrol update exited {proc.returncode}: {why[0] if why else ''}\n")


def register(app: typer.Typer) -> None:
    """Add ``agent gate`` to the agent group."""

    @app.command("gate")
    def gate(
        fmt: Annotated[
            GateFormat,
            typer.Option(
                "--format",
                "-f",
                help="text: what was checked; slurm: one reason line; npd: the node-problem-detector plugin "
                "contract (message cut to 80 bytes); json: every result.",
            ),
        ] = GateFormat.TEXT,
        job_env: Annotated[
            Path | None,
            typer.Option("--job-env", help="The job's environment (KEY=VALUE lines): its NCCL settings are judged."),
        ] = None,
        intent: Annotated[
            Path | None,
            typer.Option("--intent", help="fabric.yaml the NIC QoS must match (default: nvidia-spectrum-x preset)."),
        ] = None,
        deadline: Annotated[
            float, typer.Option("--deadline", help="Seconds the whole collection may take; overruns are killed.")
        ] = 5.0,
        strict: Annotated[bool, typer.Option("--strict", help="Warnings block too (default: errors only).")] = False,
        drain: Annotated[
            bool,
            typer.Option(
                "--drain",
                help="With --format slurm: run 'scontrol update NodeName=<host> State=DRAIN Reason=...' for a node "
                "problem.",
            ),
        ] = False,
        expect_nics: Annotated[
            int | None, typer.Option("--expect-nics", min=1, help="Fewer RDMA NICs than this is a problem.")
        ] = None,
        root: Annotated[
            Path, typer.Option("--root", help="Read /sys and /etc under this directory instead of / (tests, chroots).")
        ] = Path("/"),
        hostname: Annotated[
            str | None, typer.Option("--hostname", help="This node's name (default: the short host name).")
        ] = None,
    ) -> None:
        """Is this host ready for a job? Collect it (bounded by --deadline), run the host and NIC checks, judge
        the job's NCCL settings (--job-env), and exit 0 ready, 1 not ready, 2 could not judge.

        Errors block, warnings only with --strict. Nothing is written outside a temporary directory, which is
        removed: safe to run every few minutes (Slurm HealthCheckProgram or prolog, an NPD custom plugin).

        Example: unifab agent gate --format slurm --drain --job-env job.env
        """
        from unifab.agent.gate import GateOptions, npd_message, reason_line, run_gate
        from unifab.agent.job_env import load_job_env
        from unifab.errors import IntentError, UsageError

        if drain and fmt is not GateFormat.SLURM:
            _usage(fmt, "--drain works with --format slurm only")
        try:
            loaded_intent = None
            if intent is not None:
                from unifab.intent import load_intent

                loaded_intent = load_intent(intent)
            env = load_job_env(job_env) if job_env is not None else None
            result = run_gate(
                GateOptions(
                    root=root,
                    hostname=hostname,
                    deadline_s=deadline,
                    intent=loaded_intent,
                    job_env=env,
                    strict=strict,
                    expect_nics=expect_nics,
                )
            )
        except IntentError as exc:
            _usage(fmt, exc.problems[0] if exc.problems else str(exc))
        except UsageError as exc:
            _usage(fmt, str(exc))
        if fmt is GateFormat.JSON:
            import orjson

            sys.stdout.write(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2).decode() + "\n")
        elif fmt is GateFormat.NPD:
            sys.stdout.write(npd_message(result) + "\n")
        elif fmt is GateFormat.SLURM:
            sys.stdout.write(reason_line(result) + "\n")
            if drain:
                _drain(result)
        else:
            sys.stdout.write(_text(result) + "\n")
        sys.stdout.flush()
        raise typer.Exit(result.exit_code)
