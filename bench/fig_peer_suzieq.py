"""Figure 4 — peer side by side: SuzieQ vs unifab on link-level interface consistency over one EOS capture set.

The work: on every link seen by LLDP, do both ends agree on speed and MTU? The input: SuzieQ's own
``sq-poller --run-once gather`` capture in ``tests/data/samples/switch/eos/suzieq_gather_eos/`` (8 vEOS +
1 vQFX + Linux servers), fed to both tools unchanged.

SuzieQ (PyPI, needs Python > 3.8.1 and < 3.10) runs from its own virtualenv
(``~/.cache/unifab-bench/suzieq-<version>`` or ``$UNIFAB_BENCH_SUZIEQ_VENV``): ``sq-poller -i`` replays the
capture into its parquet store, then ``interface assert`` runs both as its CLI and through its Python API
(``get_sqobject('interfaces')(...).aver()``). Its mismatches are the failed rows whose reasons include
``MTU mismatch`` or ``Speed mismatch``, as a set of (kind, link). The same set from SuzieQ's bundled
store (its repository's ``tests/data/parquet``, outputs kept in ``samples/peers/suzieq_runs``) is the
reference; the two differ on this input (see the notes).

unifab reads the same capture with its own parser (``eos_json.parse_suzieq_gather``), then the capture's
EOS replies are laid out as a bundle (``switches/<name>/eos/<command>.json``, the layout
``collect/eos_eapi.py`` writes) and ``unifab check --format json`` runs over it. Its mismatches are
link findings of :data:`LINK_CHECKS` between two devices of the capture. When unifab cannot do the work
yet, the figure says which part is missing and reports the comparison as not run.

If no Python <= 3.9 exists, or SuzieQ cannot be installed, only the peer's rows are skipped, with why.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import ChildRun, best_of, human_seconds, log, run_child, time_calls, unifab_argv
from bench.context import Context
from bench.results import FigureResult, Row, Target

NAME = "peer"
TITLE = "Peer side by side: SuzieQ vs unifab, link speed/MTU consistency over the same EOS capture set"

PEER_VERSION = "0.24.0"
GATHER_DIR = "switch/eos/suzieq_gather_eos"
REFERENCE = "peers/suzieq_runs/iface_assert_eos.json"
NAMESPACE = "eos"
REASONS = {"MTU mismatch": "mtu", "Speed mismatch": "speed"}
LINK_CHECKS = {"LINK-SPEED": "speed", "LINK-MTU": "mtu", "QOS-MTU": "mtu"}
SAME_TARGET = Target("==", 1.0)
# Later 1.6.x ciscoconfparse releases list build tools (poetry, sphinx, pylint, ...) as runtime
# dependencies, which sends pip's resolver into a very long backtrack for a Python 3.9 target.
PEER_CONSTRAINTS = "ciscoconfparse<=1.6.50\n"
INSTALL_TIMEOUT_S = 20 * 60

Mismatch = tuple[str, frozenset[tuple[str, str]]]  # (kind, {(device, port), (device, port)})


def twin_sizes(ctx: Context) -> list[int]:
    return []


# ------------------------------------------------------------------------------------ the peer's setup


def peer_venv() -> Path:
    env = os.environ.get("UNIFAB_BENCH_SUZIEQ_VENV")
    return Path(env) if env else Path.home() / ".cache" / "unifab-bench" / f"suzieq-{PEER_VERSION}"


def _python_version(exe: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.strip().split(".")
    if out.returncode != 0 or len(parts) != 3:
        return None
    major, minor, micro = (int(p) for p in parts)
    return (major, minor) if (3, 8, 2) <= (major, minor, micro) < (3, 10, 0) else None


def find_peer_python() -> tuple[str | None, list[str]]:
    """A Python SuzieQ accepts (> 3.8.1, < 3.10): $UNIFAB_BENCH_PEER_PYTHON, PATH, then pyenv."""
    candidates: list[str] = []
    if os.environ.get("UNIFAB_BENCH_PEER_PYTHON"):
        candidates.append(os.environ["UNIFAB_BENCH_PEER_PYTHON"])
    for name in ("python3.9", "python3.8"):
        found = shutil.which(name)
        if found:
            candidates.append(found)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        for v in sorted(pyenv.iterdir(), reverse=True):
            if v.name.startswith(("3.9", "3.8")):
                candidates.append(str(v / "bin" / "python"))
    for exe in candidates:
        if _python_version(exe):
            return exe, candidates
    return None, candidates


@dataclass(slots=True)
class PeerSetup:
    venv: Path | None
    why_not: str = ""
    install_s: float | None = None


def ensure_peer(ctx: Context) -> PeerSetup:
    venv = peer_venv()
    if (venv / "bin" / "sq-poller").is_file() and (venv / "bin" / "suzieq-cli").is_file():
        return PeerSetup(venv)
    if ctx.quick and not ctx.setup_peer:
        return PeerSetup(None, f"not installed at {venv}; `python -m bench --only peer --setup-peer` installs it")
    exe, tried = find_peer_python()
    if exe is None:
        return PeerSetup(None, f"no Python > 3.8.1 and < 3.10 found (tried: {', '.join(tried) or 'nothing'})")
    log(f"installing suzieq=={PEER_VERSION} into {venv} with {exe} (PyPI)")
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    constraints = venv.parent / f"suzieq-{PEER_VERSION}-constraints.txt"
    constraints.write_text(PEER_CONSTRAINTS)
    # PyPI only: local mirrors configured for the project's own Python may list wheels whose index
    # entries omit Requires-Python, which costs the resolver a download per candidate.
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL")}
    env["PIP_CONFIG_FILE"] = os.devnull
    start = time.perf_counter()
    made = run_child([exe, "-m", "venv", str(venv)], timeout_s=300, env=env)
    if made.returncode != 0:
        return PeerSetup(None, f"python -m venv failed: {made.describe_failure()}")
    pip = run_child(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(constraints),
            f"suzieq=={PEER_VERSION}",
        ],
        timeout_s=INSTALL_TIMEOUT_S,
        env=env,
    )
    if pip.returncode != 0 or not pip.ok:
        shutil.rmtree(venv, ignore_errors=True)
        return PeerSetup(None, f"pip install suzieq=={PEER_VERSION} failed: {pip.describe_failure()}")
    return PeerSetup(venv, install_s=time.perf_counter() - start)


# ---------------------------------------------------------------------------------------- mismatches


def _reasons(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return []


def suzieq_mismatches(rows: list[dict[str, Any]]) -> set[Mismatch]:
    """(kind, link) pairs from SuzieQ's ``interface assert`` rows; each link appears once."""
    out: set[Mismatch] = set()
    for r in rows:
        if r.get("result") != "fail" or not r.get("peerHostname"):
            continue
        link = frozenset({(r["hostname"], r["ifname"]), (r["peerHostname"], r["peerIfname"])})
        for reason in _reasons(r.get("assertReason")):
            if reason in REASONS:
                out.add((REASONS[reason], link))
    return out


def unifab_mismatches(findings: list[dict[str, Any]], devices: set[str]) -> set[Mismatch]:
    out: set[Mismatch] = set()
    for f in findings:
        kind = LINK_CHECKS.get(f.get("check", ""))
        subject = f.get("subject", {})
        if kind is None or subject.get("kind") != "link":
            continue
        ends = []
        for end in (subject.get("a", ""), subject.get("b", "")):
            device, _, port = str(end).partition(":")
            ends.append((device, port))
        if all(d in devices for d, _ in ends):
            out.add((kind, frozenset(ends)))
    return out


def describe(mismatches: set[Mismatch]) -> str:
    if not mismatches:
        return "none"
    items = []
    for kind, link in sorted(mismatches, key=lambda m: (m[0], sorted(m[1]))):
        a, b = sorted(link)
        items.append(f"{kind} {a[0]}:{a[1]}—{b[0]}:{b[1]}")
    return "; ".join(items)


# ---------------------------------------------------------------------------------------- SuzieQ side


@dataclass(slots=True)
class PeerRun:
    ingest_s: float | None = None
    cli: ChildRun | None = None
    api_s: float | None = None
    api_import_s: float | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


_API_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from suzieq.sqobjects import get_sqobject
t1 = time.perf_counter()
obj = get_sqobject('interfaces')(config_file=sys.argv[1])
best, df = None, None
for _ in range(3):
    s = time.perf_counter()
    df = obj.aver(namespace=[sys.argv[2]])
    e = time.perf_counter() - s
    best = e if best is None else min(best, e)
print(json.dumps({"import_s": t1 - t0, "aver_s": best, "rows": len(df)}))
"""


def _config(peer_dir: Path) -> Path:
    cfg = peer_dir / "suzieq-cfg.yml"
    cfg.write_text(
        f"data-directory: {peer_dir / 'parquet'}\n"
        f"temp-directory: {peer_dir / 'tmp'}\n"
        "logging-level: WARNING\n"
        "analyzer:\n  timezone: GMT\n"
        "rest:\n  API_KEY: bench0000000000000000000000000000000000\n"
        "  address: 127.0.0.1\n  port: 18000\n  no-https: True\n"
    )
    (peer_dir / "tmp").mkdir(exist_ok=True)
    return cfg


def _store_state(parquet: Path) -> tuple[int, int]:
    files = list(parquet.rglob("*.parquet")) if parquet.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def replay(venv: Path, in_dir: Path, cfg: Path, parquet: Path, quiet_s: float = 2.0, cap_s: float = 60.0) -> float:
    """Run ``sq-poller -i`` (it never exits in that mode) until the store stops changing; seconds to last write."""
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(venv / "bin" / "sq-poller"), "-i", str(in_dir), "-c", str(cfg), "--no-coalescer"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    last_state, last_change = (0, 0), start
    try:
        while True:
            time.sleep(0.05)
            now = time.perf_counter()
            state = _store_state(parquet)
            if state != last_state:
                last_state, last_change = state, now
            if (state[0] and now - last_change >= quiet_s) or now - start >= cap_s or proc.poll() is not None:
                break
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if not last_state[0]:
        raise RuntimeError("sq-poller wrote no parquet")
    return last_change - start


def run_peer(venv: Path, gather: Path, scratch: Path, reps: int) -> PeerRun:
    out = PeerRun()
    peer_dir = scratch / "peer-suzieq"
    shutil.rmtree(peer_dir, ignore_errors=True)
    in_dir = peer_dir / "in"
    in_dir.mkdir(parents=True)
    for f in sorted(gather.glob("*.output")):
        shutil.copy(f, in_dir / f.name)
    cfg = _config(peer_dir)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    log("SuzieQ: sq-poller replays the capture into parquet")
    try:
        out.ingest_s = replay(venv, in_dir, cfg, peer_dir / "parquet")
    except RuntimeError as exc:
        out.error = str(exc)
        return out
    log(f"SuzieQ: interface assert, CLI × {reps} and Python API")
    argv = [str(venv / "bin" / "suzieq-cli"), "interface", "assert", f"--namespace={NAMESPACE}"]
    argv += ["--config", str(cfg), "--format=json"]
    runs = [run_child(argv, timeout_s=300, env=env) for _ in range(reps)]
    good = [r for r in runs if r.ok and r.returncode in (0, 255)]  # 255 = "assert failed", by design
    if not good:
        out.error = f"suzieq-cli interface assert failed: {runs[0].describe_failure()}"
        return out
    out.cli = min(good, key=lambda r: r.wall_s)
    out.rows = json.loads(out.cli.stdout or b"[]")
    api = run_child([str(venv / "bin" / "python"), "-c", _API_SCRIPT, str(cfg), NAMESPACE], timeout_s=300, env=env)
    if api.ok and api.returncode == 0:
        p = json.loads(api.stdout.decode().strip().splitlines()[-1])
        out.api_s, out.api_import_s = p["aver_s"], p["import_s"]
    return out


# ---------------------------------------------------------------------------------------- unifab side


@dataclass(slots=True)
class UnifabRun:
    parse_s: float | None = None
    parse_note: str = ""
    devices: set[str] = field(default_factory=set)
    check: ChildRun | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    unavailable: str = ""
    import_notes: list[str] = field(default_factory=list)
    switch_links: int = 0  # switch↔switch links with both ends read (what the LINK-/QOS-MTU checks compare)


def _gather_records(path: Path) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    text = path.read_text()
    pos = 0
    out: list[dict[str, Any]] = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        value, pos = decoder.raw_decode(text, pos)
        out += value if isinstance(value, list) else [value]


def write_eos_bundle(gather: Path, bundle: Path) -> tuple[set[str], list[str]]:
    """Lay the capture out as a bundle with the product's own importer (``collect.suzieq_gather``).

    Returns the EOS switches written and the importer's notes (hosts of other OSes, missing commands).
    The importer writes each switch's eAPI replies and a running-config reconstructed from them, which is
    what the bundle reader takes a switch's ports from.
    """
    from unifab.collect.suzieq_gather import gather_to_bundle

    notes = gather_to_bundle(sorted(gather.glob("*.output")), bundle)
    hosts = {p.parent.name for p in (bundle / "switches").glob("*/eos")} if (bundle / "switches").is_dir() else set()
    return hosts, notes


def run_unifab(gather: Path, scratch: Path, quick: bool) -> UnifabRun:
    from unifab.errors import ParseError

    out = UnifabRun()
    files = sorted(gather.glob("*.output"))
    try:
        from unifab.parse.switch.eos_json import merge_gathers, parse_suzieq_gather
    except ImportError as exc:
        out.unavailable = f"unifab has no parser for SuzieQ gather files ({exc})"
        return out
    texts = [(str(f), f.read_text()) for f in files]

    def parse_all() -> Any:
        return merge_gathers(*(parse_suzieq_gather(t, s) for s, t in texts))

    gathered = parse_all()
    out.parse_s, _ = time_calls(parse_all, min_total_s=0.2 if quick else 1.0)
    n_if = sum(len(h.interfaces.interfaces) for h in gathered.hosts.values() if h.interfaces)
    out.parse_note = f"{len(gathered.hosts)} EOS hosts, {n_if} interfaces; not read: " + ", ".join(
        f"{h} ({d})" for h, d in sorted(gathered.other_hosts.items())
    )
    bundle = scratch / "peer-unifab-bundle"
    shutil.rmtree(bundle, ignore_errors=True)
    try:
        out.devices, out.import_notes = write_eos_bundle(gather, bundle)
    except (ParseError, OSError) as exc:
        out.unavailable = f"importing the capture as a bundle failed: {exc}"
        return out
    log("unifab: check over the capture laid out as a bundle")
    runs = [
        run_child([*unifab_argv(), "check", str(bundle), "--format", "json", "--fail-on", "never"], timeout_s=300)
        for _ in range(1 if quick else 3)
    ]
    good = [r for r in runs if r.ok and r.returncode == 0]
    if not good:
        out.unavailable = f"unifab check failed on the EOS bundle: {runs[0].describe_failure()}"
        return out
    out.check = best_of(good)
    out.findings = json.loads(out.check.stdout)["findings"]
    out.unavailable = _why_unifab_cannot(out.findings, out.devices)
    from unifab.checks.context import CheckContext
    from unifab.collect.bundle import load_bundle

    out.switch_links = len(CheckContext.build(load_bundle(bundle)).port_links)
    return out


def _why_unifab_cannot(findings: list[dict[str, Any]], devices: set[str]) -> str:
    """Empty when unifab can do the work; otherwise what is missing (the check, or reading EOS at all)."""
    from unifab.checks.registry import registry

    known = set(registry())
    checks = sorted(c for c in LINK_CHECKS if c in known)
    unread = sorted({d for f in findings if (d := _unread_switch(f)) is not None and d in devices})
    missing = []
    if not devices:
        missing.append("the capture holds no EOS switch the importer could write")
    if unread:
        missing.append(
            f"the bundle reader could not read {len(unread)} of {len(devices)} imported EOS switches "
            f"({', '.join(unread)}; see the INPUT findings)"
        )
    if not any(c.startswith("LINK-") for c in checks):
        missing.append(
            "no link-level speed/MTU check between two switches is registered "
            f"(looked for {', '.join(sorted(c for c in LINK_CHECKS if c.startswith('LINK-')))}; "
            "QOS-MTU compares NIC and switch only)"
        )
    return "; ".join(missing)


def _unread_switch(finding: dict[str, Any]) -> str | None:
    """The switch an INPUT-* finding says could not be read (from its device, else its ``switches/<name>`` path)."""
    if not str(finding.get("check", "")).startswith("INPUT-"):
        return None
    subject = finding.get("subject", {})
    parts = str(subject.get("path", "")).split("/")
    if subject.get("device"):
        return str(subject["device"])
    return parts[1] if len(parts) > 1 and parts[0] == "switches" else None


# ------------------------------------------------------------------------------------------------ run


def run(ctx: Context) -> FigureResult:
    fig = FigureResult(NAME, TITLE)
    gather = ctx.samples / GATHER_DIR
    if not gather.is_dir():
        fig.skipped = f"capture set not found: {gather}"
        return fig
    reps = 1 if ctx.quick else 3
    uni = run_unifab(gather, ctx.scratch, ctx.quick)
    setup = ensure_peer(ctx)
    peer = PeerRun(error=f"peer unavailable: {setup.why_not}") if setup.venv is None else None
    if setup.venv is not None:
        peer = run_peer(setup.venv, gather, ctx.scratch, reps)
        if peer.error:
            peer.error = f"peer unavailable: {peer.error}"
    assert peer is not None
    # --- SuzieQ rows
    sq = f"SuzieQ {PEER_VERSION}"
    if setup.install_s is not None:
        fig.add(Row(NAME, sq, "install into its own virtualenv (this run)", round(setup.install_s, 1), "s"))
    peer_set: set[Mismatch] | None = None
    if peer.error:
        fig.add(Row(NAME, sq, "interface assert", None, "s", note=peer.error))
        log(peer.error)
    else:
        assert peer.cli is not None and peer.ingest_s is not None
        peer_set = suzieq_mismatches(peer.rows)
        fig.add(
            Row(
                NAME,
                sq,
                "sq-poller replay of the capture into parquet",
                round(peer.ingest_s, 2),
                "s",
                note="start to last parquet write, worker spawn included",
            )
        )
        fig.add(
            Row(
                NAME,
                sq,
                f"suzieq-cli interface assert, best of {reps}",
                round(peer.cli.wall_s, 3),
                "s",
                note=f"peak RSS {peer.cli.peak_rss_bytes / 2**20:.0f} MiB; {len(peer.rows)} rows",
            )
        )
        if peer.api_s is not None:
            fig.add(
                Row(
                    NAME,
                    sq,
                    "Python API interfaces.aver(), best of 3",
                    round(peer.api_s * 1000, 1),
                    "ms",
                    note=f"import suzieq.sqobjects {peer.api_import_s or 0:.2f} s, not counted",
                )
            )
        fig.add(
            Row(
                NAME,
                sq,
                "speed/MTU mismatches found (links)",
                float(len(peer_set)),
                "",
                note=describe(peer_set),
            )
        )
    reference_path = ctx.samples / REFERENCE
    if reference_path.is_file():
        ref = suzieq_mismatches(json.loads(reference_path.read_text()))
        fig.add(
            Row(
                NAME,
                f"{sq}, its bundled store",
                "speed/MTU mismatches (reference run kept in samples)",
                float(len(ref)),
                "",
                note=describe(ref),
            )
        )
        if peer_set is not None and peer_set != ref:
            fig.notes.append(
                "SuzieQ re-parsing the capture does not reproduce its own bundled store: the vQFX ports "
                "come out as type ethernet rather than subinterface, so its Speed mismatch rows become "
                "No Peer Found (known, samples/peers reference A.4). Both sets are in the table."
            )
    # --- unifab rows
    if uni.parse_s is not None:
        fig.add(
            Row(
                NAME,
                "unifab",
                "parse the capture (eos_json.parse_suzieq_gather)",
                round(uni.parse_s * 1000, 2),
                "ms",
                note=uni.parse_note,
            )
        )
    if uni.check is not None:
        fig.add(
            Row(
                NAME,
                "unifab",
                f"unifab check over the capture as a bundle, best of {1 if ctx.quick else 3}",
                round(uni.check.wall_s, 3),
                "s",
                note=f"peak RSS {uni.check.peak_rss_bytes / 2**20:.0f} MiB; {len(uni.findings)} findings; bundle "
                f"written by unifab.collect.suzieq_gather ({len(uni.devices)} EOS switches; "
                f"{'; '.join(uni.import_notes) or 'nothing left out'})",
            )
        )
    uni_set = None if uni.unavailable else unifab_mismatches(uni.findings, uni.devices)
    if uni_set is not None:
        fig.add(
            Row(
                NAME,
                "unifab",
                "speed/MTU mismatches found (links)",
                float(len(uni_set)),
                "",
                note=f"{describe(uni_set)}; {uni.switch_links} switch↔switch links compared (both ends read)",
            )
        )
    # --- side by side
    why = "; ".join(x for x in (uni.unavailable and f"unifab: {uni.unavailable}", peer.error) if x)
    same = None if (uni_set is None or peer_set is None) else (1.0 if uni_set == peer_set else 0.0)
    fig.add(Row(NAME, "side by side", "same mismatches found (1 = yes)", same, "", SAME_TARGET, why))
    ratio = None
    if uni_set is not None and peer_set is not None and uni.check is not None and peer.cli is not None:
        ratio = uni.check.wall_s / peer.cli.wall_s
    fig.add(
        Row(
            NAME,
            "side by side",
            "time ratio unifab check / suzieq-cli interface assert",
            None if ratio is None else round(ratio, 3),
            "×",
            note=why,
        )
    )
    if uni.parse_s is not None and peer.ingest_s is not None and not peer.error:
        fig.add(
            Row(
                NAME,
                "side by side",
                "reading the capture: unifab parse / SuzieQ replay",
                round(uni.parse_s / peer.ingest_s, 4),
                "×",
                note="not the same work: SuzieQ's replay also spawns a worker and writes parquet",
            )
        )
    fig.headline = _headline(sq, peer, peer_set, uni, uni_set)
    return fig


def _headline(
    sq: str, peer: PeerRun, peer_set: set[Mismatch] | None, uni: UnifabRun, uni_set: set[Mismatch] | None
) -> str:
    parts = []
    if peer.error:
        parts.append(peer.error)
    elif peer.cli is not None and peer_set is not None:
        parts.append(
            f"{sq}: interface assert {human_seconds(peer.cli.wall_s)} (CLI), {len(peer_set)} speed/MTU mismatches"
        )
    if uni.parse_s is not None:
        parts.append(f"unifab parses the capture in {human_seconds(uni.parse_s)}")
    if uni_set is None:
        parts.append(f"comparison not run: unifab: {uni.unavailable}")
    elif peer_set is not None and uni.check is not None and peer.cli is not None:
        verdict = "same mismatches" if uni_set == peer_set else "DIFFERENT mismatches"
        parts.append(f"{verdict}; unifab check {uni.check.wall_s / peer.cli.wall_s:.2f}× SuzieQ's time")
    return "; ".join(parts)


if __name__ == "__main__":  # pragma: no cover - manual check of the peer setup
    print(find_peer_python(), file=sys.stderr)
