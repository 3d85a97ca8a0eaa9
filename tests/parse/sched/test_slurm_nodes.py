"""Tests for Slurm node parsing: every real sample (golden), state normalization, variants, errors, robustness."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.sched.slurm_nodes import Node, normalize_state, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
S = "scheduler/"
SAMPLES = {
    "slurm_sinfo.json": "slurm_sinfo_json.json",
    "slurm_sinfo_Nl.txt": "slurm_sinfo_Nl.json",
    "slurm_sinfo_R.txt": "slurm_sinfo_R.json",
    "slurm_scontrol_show_node_oneliner.txt": "slurm_scontrol_show_node_oneliner.json",
    "slurm_scontrol_show_node_drained.txt": "slurm_scontrol_show_node_drained.json",
    "slurmrestd_25.11_v0.0.44_node_drain.json": "slurmrestd_25.11_v0.0.44_node_drain.json",
    "slurmrestd_25.11_v0.0.44_node_gpus_allocated.json": "slurmrestd_25.11_v0.0.44_node_gpus_allocated.json",
}
REASON = "IB port mlx5_3 LinkDowned; cable check"


def read(samples: Path, name: str) -> tuple[Node, ...]:
    return parse((samples / S / name).read_text(), S + name)


def error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, "t")
    return info.value


@pytest.mark.parametrize(("sample", "golden_name"), sorted(SAMPLES.items()))
def test_golden(samples: Path, golden: GoldenCheck, sample: str, golden_name: str) -> None:
    golden(GOLDEN / golden_name, read(samples, sample))


def test_drained_node_in_every_form(samples: Path) -> None:
    by_form = {name: {n.name: n for n in read(samples, name)}["dgx-h100-006"] for name in SAMPLES if "slurm_" in name}
    for name, node in by_form.items():
        assert "drain" in node.state or name == "slurm_sinfo_R.txt", name  # sinfo -R shows no state
    full = by_form["slurm_scontrol_show_node_drained.txt"]
    assert full == by_form["slurm_scontrol_show_node_oneliner.txt"]
    assert (full.state, full.state_raw, full.reason) == (frozenset({"idle", "drain"}), "IDLE+DRAIN", REASON)
    assert (full.reason_user, full.reason_time, full.gres, full.partitions) == (
        "root",
        "2026-11-30T02:14:12",
        "gpu:h100:8",
        ("gpu",),
    )
    js = by_form["slurm_sinfo.json"]  # "state": "idle" + "state_flags": ["DRAIN"]
    assert (js.state, js.state_raw, js.reason_time, js.gres_used) == (
        frozenset({"idle", "drain"}),
        "idle+DRAIN",
        "2026-11-30T02:14:12Z",
        "gpu:h100:0(IDX:N/A)",
    )
    assert by_form["slurm_sinfo_Nl.txt"].state == frozenset({"drain"})  # "drained": base not shown
    assert by_form["slurm_sinfo_R.txt"].reason == "IB port mlx5_3 LinkD"  # cut to 20 characters
    assert by_form["slurm_sinfo_R.txt"].state == frozenset()


def test_other_nodes(samples: Path) -> None:
    nodes = {n.name: n for n in read(samples, "slurm_sinfo.json")}
    assert nodes["dgx-h100-001"].state == frozenset({"alloc"})
    assert (
        nodes["dgx-h100-005"].state == frozenset({"mix"}) and nodes["dgx-h100-005"].gres_used == "gpu:h100:4(IDX:0-3)"
    )
    text = {n.name: n for n in read(samples, "slurm_sinfo_Nl.txt")}
    assert list(text) == list(nodes) and text["dgx-h100-001"].partitions == ("gpu",)  # "gpu*": default partition


def test_slurmrestd_nodes(samples: Path) -> None:
    (drain,) = read(samples, "slurmrestd_25.11_v0.0.44_node_drain.json")
    assert (drain.name, drain.state, drain.reason, drain.reason_user) == (
        "cn2",
        frozenset({"idle", "drain"}),
        "ECC memory error",
        "root",
    )
    assert drain.reason_time == "2025-11-12T10:16:25Z" and drain.gres is None  # 1762942585
    (gpu,) = read(samples, "slurmrestd_25.11_v0.0.44_node_gpus_allocated.json")
    assert (gpu.state, gpu.gres, gpu.gres_used, gpu.reason_time) == (
        frozenset({"alloc"}),
        "gpu:h100:4",
        "gpu:h100:4(IDX:0-3)",
        None,
    )


# --- states ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        ("IDLE+DRAIN", {"idle", "drain"}),
        ("DOWN+DRAIN+NOT_RESPONDING", {"down", "drain", "not_responding"}),
        ("MIXED+COMPLETING", {"mix", "completing"}),
        ("draining", {"drain", "draining"}),
        ("drng*", {"drain", "draining", "not_responding"}),
        ("idle~", {"idle", "powered_down"}),
        ("down*", {"down", "not_responding"}),
        ("alloc#", {"alloc", "powering_up"}),
        ("idle%", {"idle", "powering_down"}),
        ("mix@", {"mix", "reboot_requested"}),
        ("maint$", {"maint"}),
        ("mixed-", {"mix", "planned"}),
        ("IDLE+CLOUD+POWERED_DOWN", {"idle", "cloud", "powered_down"}),
        ("ALLOCATED+SOMETHING_NEW", {"alloc", "something_new"}),
    ],
)
def test_state_normalization(raw: str, tokens: set[str]) -> None:
    assert normalize_state(raw, "t") == frozenset(tokens)


def test_bad_state_word() -> None:
    with pytest.raises(ParseError) as info:
        normalize_state("IDLE+9", "t", line=4)
    assert info.value.line == 4 and "'9'" in info.value.expected


# --- variants -------------------------------------------------------------------------------------


def test_plain_sinfo_merges_partitions() -> None:
    text = (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "gpu*         up 2-00:00:00      4  alloc dgx-h100-[001-004]\n"
        "gpu*         up 2-00:00:00      1  drain dgx-h100-006\n"
        "debug        up      30:00      2   idle dgx-h100-[005-006]\n"
    )
    nodes = {n.name: n for n in parse(text)}
    assert list(nodes) == [
        "dgx-h100-001",
        "dgx-h100-002",
        "dgx-h100-003",
        "dgx-h100-004",
        "dgx-h100-006",
        "dgx-h100-005",
    ]
    assert nodes["dgx-h100-006"].partitions == ("gpu", "debug") and nodes["dgx-h100-006"].state == {"drain"}
    assert nodes["dgx-h100-005"].state == {"idle"}


def test_sinfo_reason_long() -> None:
    text = (
        "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
        "ECC                  root         2026-11-30T02:14:12 drain  n[1-2]\n"
        "Not responding       slurm        2026-11-30T03:00:00 down*  n3\n"
    )
    nodes = parse(text)
    assert [(n.name, n.reason, n.reason_user, n.state) for n in nodes] == [
        ("n1", "ECC", "root", {"drain"}),
        ("n2", "ECC", "root", {"drain"}),
        ("n3", "Not responding", "slurm", {"down", "not_responding"}),
    ]


def test_scontrol_detail_with_gres_used_and_comment() -> None:
    text = (
        "NodeName=gpu7 Arch=x86_64 CoresPerSocket=32\n"
        "   Gres=gpu:h100:8(S:0-1)\n"
        "   GresUsed=gpu:h100:3(IDX:0,2,5)\n"
        "   State=MIXED+DRAIN ThreadsPerCore=1\n"
        "   Partitions=gpu,debug\n"
        "   Comment=rack 7 = spare\n"
        "   Reason=xid 79\n"
    )
    (node,) = parse(text)
    assert (node.state, node.gres, node.gres_used) == ({"mix", "drain"}, "gpu:h100:8(S:0-1)", "gpu:h100:3(IDX:0,2,5)")
    assert (node.partitions, node.reason, node.reason_user, node.reason_time) == (
        ("gpu", "debug"),
        "xid 79",
        None,
        None,
    )


def test_no_nodes() -> None:
    assert parse("No nodes in the system\n") == ()
    assert parse('{"nodes": []}') == ()


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("NodeName=a b=1\n", 1, "State="),
        ("NodeName=\n   State=IDLE\n", 1, "node name"),
        ("NodeName=a\n   State=IDLE\nStray\n", 3, "'NodeName='"),
        ("NodeName=a State=IDLE+1\n", 1, "state word"),
        ("PARTITION STATE\ngpu idle\n", 1, "NODELIST"),
        ("NODELIST REASON STATE\nn1 x idle\n", 1, "first or the last"),
        ("NODELIST STATE REASON\nn[1- idle x\n", 2, "']' closing"),
        ("REASON USER TIMESTAMP NODELIST\nx root\n", 2, "4 columns"),
        ("REASON USER TIMESTAMP NODELIST\nx root today n1\n", 2, "YYYY-MM-DD"),
        ("Mon Nov 30 02:14:20 2026\n", 1, "header"),
        ("something else\n", 1, "expected sinfo"),
    ],
)
def test_text_errors(text: str, line: int, needle: str) -> None:
    err = error(text)
    assert err.line == line and needle in err.expected, err


@pytest.mark.parametrize(
    ("doc", "key", "needle"),
    [
        ({"sinfo": []}, "sinfo", "not supported"),
        ({"meta": {}}, "nodes", "nodes"),
        ({"nodes": [{"state": ["IDLE"]}]}, "nodes[0].name", "name"),
        ({"nodes": [{"name": "a", "state": [3]}]}, "nodes[0].state[0]", "string"),
        (
            {"nodes": [{"name": "a", "state": "IDLE", "partitions": "gpu", "reason_changed_at": "x", "reason": "r"}]},
            "nodes[0].reason_changed_at",
            "integer",
        ),
    ],
)
def test_json_errors(doc: dict[str, object], key: str, needle: str) -> None:
    err = error(json.dumps(doc))
    assert err.key == key and needle in err.expected


# --- robustness -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_truncated_samples_raise_only_parse_errors(samples: Path, sample: str) -> None:
    text = (samples / S / sample).read_text()
    for cut in range(0, len(text), max(1, len(text) // 150)):
        try:
            parse(text[:cut], "cut")
        except ParseError as exc:
            assert exc.source == "cut" and exc.expected
            if exc.line is not None:
                assert 1 <= exc.line <= text[:cut].count("\n") + 1


# --- read in part ---------------------------------------------------------------------------------


def _lenient(text: str) -> tuple[tuple[Node, ...], ParseProblems]:
    log = ParseProblems("sample")
    return parse(text, "sample", log), log


def _corrupt(text: str, match: str, old: str, new: str) -> tuple[str, int]:
    """``text`` with ``old`` replaced by ``new`` on the first line holding ``match``, and that line's number."""
    lines = text.split("\n")
    i = next(i for i, raw in enumerate(lines) if match in raw)
    lines[i] = lines[i].replace(old, new, 1)
    return "\n".join(lines), i + 1


@pytest.mark.parametrize(
    ("sample", "match", "old", "new", "needle"),
    [
        ("slurm_scontrol_show_node_oneliner.txt", "dgx-h100-003", "State=ALLOCATED", "State=ALLOC?TED", "state word"),
        ("slurm_sinfo_Nl.txt", "dgx-h100-003", "allocated", "alloc?ted", "state word"),
        ("slurm_sinfo_Nl.txt", "dgx-h100-003", "  1   (null)", "", "columns"),
    ],
)
def test_a_bad_text_entry_costs_that_node(
    samples: Path, sample: str, match: str, old: str, new: str, needle: str
) -> None:
    text = (samples / S / sample).read_text()
    broken, line = _corrupt(text, match, old, new)
    with pytest.raises(ParseError) as strict:
        parse(broken, "sample")
    assert strict.value.line == line and needle in strict.value.expected
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert (problem.line, problem.skipped, problem.expected) == (line, "node dgx-h100-003", strict.value.expected)
    assert got == tuple(n for n in parse(text) if n.name != "dgx-h100-003")


def test_a_stray_line_in_a_scontrol_record_costs_that_node(samples: Path) -> None:
    one = (samples / S / "slurm_scontrol_show_node_oneliner.txt").read_text().split("\n")[0]
    drained = (samples / S / "slurm_scontrol_show_node_drained.txt").read_text()
    text = f"{one}\n\n{drained}"  # two records as one run prints them
    broken, line = _corrupt(text, "   Gres=gpu:h100:8", "   Gres", "\x01 Gres")
    got, log = _lenient(broken)
    (problem,) = log.problems
    assert (problem.line, problem.skipped) == (
        line,
        "node dgx-h100-006",
    ) and "indented continuation" in problem.expected
    assert got == parse(one)


def test_a_bad_sinfo_row_costs_its_nodes_in_every_partition() -> None:
    """A node whose row in one partition cannot be read is left out, not read with that partition missing."""
    text = (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "gpu*         up 2-00:00:00      4  alloc dgx-h100-[001-004]\n"
        "gpu*         up 2-00:00:00      1  dr?in dgx-h100-006\n"
        "debug        up      30:00      2   idle dgx-h100-[005-006]\n"
        "\x01 garbled \x01\n"
    )
    got, log = _lenient(text)
    assert [(p.line, p.skipped) for p in log.problems] == [(3, "node dgx-h100-006"), (5, "line 5")]
    assert [n.name for n in got] == [f"dgx-h100-00{i}" for i in range(1, 6)]
    assert {n.name: n.partitions for n in got}["dgx-h100-005"] == ("debug",)


def test_a_bad_json_node_costs_that_node(samples: Path) -> None:
    text = (samples / S / "slurm_sinfo.json").read_text()
    doc = json.loads(text)
    doc["nodes"][2]["state"] = 7
    with pytest.raises(ParseError) as strict:
        parse(json.dumps(doc), "sample")
    assert strict.value.key == "nodes[2].state"
    got, log = _lenient(json.dumps(doc))
    (problem,) = log.problems
    assert (problem.key, problem.skipped) == ("nodes[2].state", "node dgx-h100-003")
    assert got == tuple(n for n in parse(text) if n.name != "dgx-h100-003")
    doc["nodes"][4]["name"] = None
    got, log = _lenient(json.dumps(doc))
    assert [p.skipped for p in log.problems] == ["node dgx-h100-003", "the node at nodes[4]"]
    assert len(got) == 4


@pytest.mark.parametrize("sample", ["slurm_sinfo_R.txt", "slurm_scontrol_show_node_drained.txt"])
def test_output_whose_every_node_is_bad_is_refused(samples: Path, sample: str) -> None:
    text = (samples / S / sample).read_text().replace("IDLE+DRAIN", "IDLE+DR?IN").replace("2026-11-30T02", "soon")
    with pytest.raises(ParseError):
        _lenient(text)
