"""Figure 3 — parse throughput per format, against a plain ``json.loads`` / line split of the same bytes.

Each format gets a corpus: the real device outputs in ``tests/data/samples`` that it reads, plus (for
formats the twin writes) up to :data:`TWIN_FILES` files from a small twin bundle. Texts are read
once; the timed loop only parses (no I/O), best of several batches. The floor does the least work
that still touches every byte the same way: ``json.loads`` for JSON documents (a ``raw_decode`` loop
for SuzieQ's concatenated JSON lists), ``str.splitlines`` for text. The ratio is parse time over
floor time on the same bytes (how many times the floor the parser costs).

Formats are listed in :data:`CORPORA`. A corpus whose module does not exist is reported as
unavailable; a format in unifab's ``parse`` registry without a corpus here is named in the notes.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench.common import human_seconds, log, median, time_calls
from bench.context import Context
from bench.results import FigureResult, Row

NAME = "parse"
TITLE = "Parse throughput per format (MB/s, records/s) vs. json.loads / line split of the same bytes"

TWIN_FILES = 256
FloorKind = Literal["json", "lines", "json-stream"]


def _len(attr: str) -> Callable[[Any], int]:
    return lambda rec: len(getattr(rec, attr))


def _config_db_entries(rec: Any) -> int:
    return sum(len(t) for t in rec.tables.values())


def _gather_records(rec: Any) -> int:
    return sum(
        len(h.interfaces.interfaces if h.interfaces else ()) + len(_neighbors(h.lldp)) for h in rec.hosts.values()
    )


def _neighbors(lldp: Any) -> list[Any]:
    if lldp is None:
        return []
    for f in dataclasses.fields(lldp):
        value = getattr(lldp, f.name)
        if isinstance(value, dict | list | tuple):
            return list(value.values()) if isinstance(value, dict) else list(value)
    return []


def count_records(rec: Any) -> int:
    """Generic count: a sequence's length; a record's largest collection of records; else one."""
    if isinstance(rec, list | tuple):
        return len(rec)
    if dataclasses.is_dataclass(rec) and not isinstance(rec, type):
        inner = getattr(rec, "data", None)
        if dataclasses.is_dataclass(inner) and not isinstance(inner, type):
            return count_records(inner)
        sizes = []
        for f in dataclasses.fields(rec):
            value = getattr(rec, f.name)
            items = list(value.values()) if isinstance(value, dict) else value
            if isinstance(items, list | tuple) and items and all(dataclasses.is_dataclass(x) for x in items):
                sizes.append(len(items))
        return max(sizes, default=1)
    return 1


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str  # the registry's format name where there is one
    module: str
    record: str  # what one record is, for the table
    floor: FloorKind
    function: str = "parse"
    samples: tuple[str, ...] = ()  # globs under the samples directory
    twin: tuple[str, ...] = ()  # globs under a twin bundle
    tree: bool = False  # the parser takes {relative path: text} of a directory
    records: Callable[[Any], int] = field(default=count_records)
    auto: bool = False  # matched to samples by name, not listed by hand


CORPORA: list[Corpus] = [
    Corpus(
        "mlnx-qos",
        "unifab.parse.host.mlnx_qos",
        "NIC",
        "lines",
        samples=("host/mlnx_qos_*.txt",),
        twin=("hosts/*/cmd/mlnx_qos/*.txt",),
        records=lambda _: 1,
    ),
    Corpus(
        "sysfs-ecn",
        "unifab.parse.host.sysfs_ecn",
        "NIC ecn/ tree",
        "lines",
        function="parse_tree",
        twin=("hosts/*/sys/class/net/*/ecn",),
        tree=True,
        records=lambda _: 1,
    ),
    Corpus(
        "traffic-class",
        "unifab.parse.host.traffic_class",
        "file",
        "lines",
        twin=("hosts/*/sys/class/infiniband/*/tc/1/traffic_class",),
        records=lambda _: 1,
    ),
    Corpus(
        "ibdev2netdev",
        "unifab.parse.host.ibdev2netdev",
        "device",
        "lines",
        samples=("host/ibdev2netdev_*.txt",),
        twin=("hosts/*/cmd/ibdev2netdev.txt",),
    ),
    Corpus(
        "lldpcli",
        "unifab.parse.host.lldpcli",
        "neighbor",
        "json",
        samples=("host/lldpcli_neighbors_*.json", "host/lldpcli_neighbors_*.keyvalue.txt"),
        twin=("hosts/*/cmd/lldpcli.json",),
    ),
    Corpus(
        "sonic-config-db",
        "unifab.parse.switch.sonic_config_db",
        "table entry",
        "json",
        samples=("switch/sonic/sonic_config_db_*.json",),
        twin=("switches/*/sonic/config_db.json",),
        records=_config_db_entries,
    ),
    Corpus(
        "sonic-qos",
        "unifab.parse.switch.sonic_qos",
        "port",
        "json",
        samples=("switch/sonic/sonic_config_db_*.json", "switch/sonic/sonic_qos_rendered_*.json"),
        twin=("switches/*/sonic/config_db.json",),
        records=_len("ports"),
    ),
    Corpus(
        "cabling-csv",
        "unifab.parse.plan.cabling",
        "cable",
        "lines",
        twin=("plan/cabling.csv",),
    ),
    Corpus(
        "eos-json",
        "unifab.parse.switch.eos_json",
        "interface / neighbor / counter row",
        "json",
        samples=("switch/eos/eos*.json",),
    ),
    Corpus(
        "suzieq-gather (EOS)",
        "unifab.parse.switch.eos_json",
        "interface + LLDP neighbor",
        "json-stream",
        function="parse_suzieq_gather",
        samples=("switch/eos/suzieq_gather_eos/*.output",),
        records=_gather_records,
    ),
]


def twin_size(ctx: Context) -> int:
    return 256 if ctx.quick else 1024


def twin_sizes(ctx: Context) -> list[int]:
    return [twin_size(ctx)]


# ------------------------------------------------------------------------------------------ floors


def _json_stream(text: str) -> int:
    decoder = json.JSONDecoder()
    pos, n, end = 0, 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        _, pos = decoder.raw_decode(text, pos)
        n += 1
    return n


def _floor_one(kind: FloorKind, text: str) -> object:
    if kind == "json-stream":
        return _json_stream(text)
    if kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            return text.splitlines()  # keyvalue / text variants of a JSON-first format
    return text.splitlines()


# ------------------------------------------------------------------------------------------ corpus


@dataclass(slots=True)
class Loaded:
    corpus: Corpus
    inputs: list[tuple[str, Any]]  # (source, text or {path: text})
    nbytes: int
    rejected: list[str]


def _is_data_file(p: Path) -> bool:
    return p.is_file() and not p.name.endswith(".source.txt")


def load_corpus(corpus: Corpus, parser: Callable[..., Any], samples: Path, twin: Path | None) -> Loaded:
    """Read the corpus files; keep those the parser accepts (a sample of another flavour is skipped)."""
    inputs: list[tuple[str, Any]] = []
    rejected: list[str] = []
    paths: list[Path] = []
    for pattern in corpus.samples:
        paths += sorted(p for p in samples.glob(pattern) if _is_data_file(p) or (corpus.tree and p.is_dir()))
    if twin is not None:
        for pattern in corpus.twin:
            paths += sorted(twin.glob(pattern))[:TWIN_FILES]
    nbytes = 0
    for path in paths:
        if corpus.tree:
            value: Any = {p.relative_to(path).as_posix(): p.read_text() for p in sorted(path.rglob("*")) if p.is_file()}
            size = sum(len(t.encode()) for t in value.values())
        else:
            value = path.read_text(encoding="utf-8")
            size = len(value.encode())
        try:
            parser(value, str(path))
        except Exception:
            rejected.append(path.name)
            continue
        inputs.append((str(path), value))
        nbytes += size
    return Loaded(corpus, inputs, nbytes, rejected)


def _floor_texts(loaded: Loaded) -> list[str]:
    texts: list[str] = []
    for _, value in loaded.inputs:
        texts += list(value.values()) if isinstance(value, dict) else [value]
    return texts


def _parse_pass(parser: Callable[..., Any], inputs: list[tuple[str, Any]]) -> Callable[[], object]:
    return lambda: [parser(value, source) for source, value in inputs]


def _floor_pass(kind: FloorKind, texts: list[str]) -> Callable[[], object]:
    return lambda: [_floor_one(kind, t) for t in texts]


# ------------------------------------------------------------------------------------------------ run


def run(ctx: Context) -> FigureResult:
    fig = FigureResult(NAME, TITLE)
    twin_path: Path | None = None
    try:
        twin_path = ctx.twins.get(twin_size(ctx)).path
    except Exception as exc:
        fig.notes.append(f"no twin corpus: {exc}")
    budget = 0.25 if ctx.quick else 1.0
    ratios: dict[str, float] = {}
    auto, unmatched = auto_corpora(ctx.samples)
    for corpus in [*CORPORA, *auto]:
        try:
            parser = getattr(importlib.import_module(corpus.module), corpus.function)
        except (ImportError, AttributeError) as exc:
            fig.add(Row(NAME, corpus.name, "parse throughput", None, "MB/s", note=f"unavailable: {exc}"))
            continue
        loaded = load_corpus(corpus, parser, ctx.samples, twin_path)
        if not loaded.inputs:
            unmatched.append(corpus.name)
            if corpus in CORPORA:
                fig.add(Row(NAME, corpus.name, "parse throughput", None, "MB/s", note="no corpus file parses"))
            continue
        ratio = _measure(fig, corpus, parser, loaded, twin_path, budget)
        ratios[corpus.name] = ratio
    if auto:
        fig.notes.append(
            f"{len(auto)} registry formats without a hand-made corpus were matched to samples by name "
            "(format name tokens in the file name; files the parser rejects are dropped); their rows say "
            "'auto-matched' and name the files."
        )
    if unmatched:
        fig.notes.append(
            "Formats not measured (no sample found or none parses; add a corpus to CORPORA): "
            + ", ".join(sorted(set(unmatched)))
        )
    if ratios:
        worst = max(ratios, key=lambda k: ratios[k])
        best = min(ratios, key=lambda k: ratios[k])
        fig.headline = (
            f"{len(ratios)} formats: median {median(list(ratios.values())):.1f}× the floor; "
            f"slowest {worst} {ratios[worst]:.1f}×, fastest {best} {ratios[best]:.1f}×"
        )
    else:
        fig.headline = "no format could be measured"
    return fig


def _measure(
    fig: FigureResult,
    corpus: Corpus,
    parser: Callable[..., Any],
    loaded: Loaded,
    twin_path: Path | None,
    budget: float,
) -> float:
    records = sum(corpus.records(parser(v, s)) for s, v in loaded.inputs)
    parse_s, _ = time_calls(_parse_pass(parser, loaded.inputs), min_total_s=budget)
    floor_s, _ = time_calls(_floor_pass(corpus.floor, _floor_texts(loaded)), min_total_s=budget / 2)
    mb = loaded.nbytes / 1e6
    n_samples = sum(1 for s, _ in loaded.inputs if twin_path is None or not s.startswith(str(twin_path)))
    what = f"{len(loaded.inputs)} inputs ({n_samples} samples, {len(loaded.inputs) - n_samples} twin), {mb:.3f} MB"
    if corpus.auto:
        what += "; auto-matched: " + ", ".join(Path(s).name for s, _ in loaded.inputs)
    elif loaded.rejected:
        what += f"; not this flavour: {', '.join(loaded.rejected)}"
    floor_name = {
        "json": "json.loads, else str.splitlines",
        "lines": "str.splitlines",
        "json-stream": "json raw_decode loop",
    }[corpus.floor]
    fig.add(
        Row(
            NAME,
            corpus.name,
            "parse throughput",
            round(mb / parse_s, 2),
            "MB/s",
            note=f"{records / parse_s:,.0f} records/s (record = {corpus.record}); {what}",
        )
    )
    fig.add(Row(NAME, corpus.name, f"floor throughput ({floor_name})", round(mb / floor_s, 2), "MB/s"))
    ratio = parse_s / floor_s
    fig.add(Row(NAME, corpus.name, "parse / floor time", round(ratio, 2), "×"))
    log(f"{corpus.name}: {mb / parse_s:.1f} MB/s, {ratio:.1f}× floor ({human_seconds(parse_s)} per pass)")
    return ratio


def _tokens(text: str) -> set[str]:
    words = re.split(r"[^a-z0-9]+", text.lower())
    return {w.removesuffix("s") for w in words if len(w) > 1}


def auto_corpora(samples: Path) -> tuple[list[Corpus], list[str]]:
    """Corpora for registry formats without one here: samples whose file names hold every token of the format name."""
    try:
        from unifab.parse.registry import FORMATS
    except ImportError:
        return [], []
    covered = {c.name for c in CORPORA}
    files = sorted(p for p in samples.rglob("*") if _is_data_file(p)) if samples.is_dir() else []
    named = [(p, _tokens(p.name)) for p in files]
    out: list[Corpus] = []
    unmatched: list[str] = []
    for name, spec in FORMATS.items():
        if name in covered or spec.tree:
            continue
        want = _tokens(name)
        hits = [p.relative_to(samples).as_posix() for p, have in named if want and want <= have]
        if not hits:
            unmatched.append(name)
            continue
        function = str(getattr(spec, "function", "parse"))
        out.append(Corpus(name, spec.module, "record", "json", function=function, samples=tuple(hits), auto=True))
    return out, unmatched
