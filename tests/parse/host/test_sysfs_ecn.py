"""The MLNX_OFED ``ecn/`` sysfs tree, as a mapping and as flattened ``path: value`` lines."""

from __future__ import annotations

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host import sysfs_ecn


def _tree(np_on: set[int], rp_on: set[int]) -> dict[str, str]:
    files = {f"roce_np/enable/{p}": f"{int(p in np_on)}\n" for p in range(8)}
    files |= {f"roce_rp/enable/{p}": f"{int(p in rp_on)}\n" for p in range(8)}
    files |= {"roce_np/cnp_dscp": "48\n", "roce_np/cnp_802p_prio": "6\n", "roce_rp/rpg_gd": "11\n"}
    files["802.1.qau_rp/enable/0"] = "0\n"  # QCN point: not RoCE, ignored
    return files


def test_tree_reads_enables_and_parameters() -> None:
    ecn = sysfs_ecn.parse_tree(_tree({3}, {0, 3}))
    assert ecn.roce_np is not None and ecn.roce_rp is not None
    assert ecn.roce_np.enabled == {3}
    assert ecn.roce_rp.enabled == {0, 3}
    assert ecn.roce_np.params == {"cnp_802p_prio": 6, "cnp_dscp": 48}
    assert ecn.roce_rp.params == {"rpg_gd": 11}


def test_absent_point_is_none() -> None:
    ecn = sysfs_ecn.parse_tree({"roce_np/enable/3": "1"})
    assert ecn.roce_rp is None
    assert ecn.roce_np is not None and ecn.roce_np.enabled == {3}


def test_flat_lines_match_tree() -> None:
    files = _tree({3}, {3})
    text = "\n".join(f"ecn/{k}: {v.strip()}" for k, v in files.items())
    assert sysfs_ecn.parse(text, "flat.txt") == sysfs_ecn.parse_tree(files)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"roce_np/enable/3": "yes"}, "expected an integer"),
        ({"roce_np/enable/3": "2"}, "holding 0 or 1"),
        ({"roce_np/enable/9": "1"}, "enable/<0-7>"),
    ],
)
def test_bad_values_name_the_file(files: dict[str, str], message: str) -> None:
    with pytest.raises(ParseError, match=message) as exc:
        sysfs_ecn.parse_tree(files, "hosts/h1/sys/class/net/eth0/ecn")
    assert "roce_np/enable/" in exc.value.source


def test_flat_line_without_separator() -> None:
    with pytest.raises(ParseError) as exc:
        sysfs_ecn.parse("roce_np/enable/3: 1\nroce_np/enable/4 1\n", "flat.txt")
    assert exc.value.line == 2


def test_bad_enable_file_costs_that_priority_only_and_leaves_it_unknown() -> None:
    files = _tree({3}, {3})
    files["roce_np/enable/3"] = "on\n"
    files["roce_rp/rpg_gd"] = "eleven\n"
    log = ParseProblems("hosts/h1/sys/class/net/eth0/ecn")
    ecn = sysfs_ecn.parse_tree(files, "hosts/h1/sys/class/net/eth0/ecn", log)
    whole = sysfs_ecn.parse_tree(_tree({3}, {3}))
    assert ecn.roce_np is not None and ecn.roce_rp is not None and whole.roce_np is not None
    # priority 3 is neither on nor off: it is unknown; every other file reads as in the unharmed tree
    assert (ecn.roce_np.enabled, ecn.roce_np.unknown) == (frozenset(), frozenset({3}))
    assert ecn.roce_np.params == whole.roce_np.params
    assert ecn.roce_rp.params == {} and ecn.roce_rp.enabled == {3}
    assert [(p.source, p.line, p.skipped) for p in log.problems] == [
        ("hosts/h1/sys/class/net/eth0/ecn/roce_np/enable/3", 1, "roce_np/enable/3"),
        ("hosts/h1/sys/class/net/eth0/ecn/roce_rp/rpg_gd", 1, "roce_rp/rpg_gd"),
    ]


def test_every_file_bad_still_raises() -> None:
    with pytest.raises(ParseError, match="an integer"):
        sysfs_ecn.parse_tree({"roce_np/enable/3": "on"}, "ecn", ParseProblems("ecn"))


def test_flat_paste_with_prompts_blank_lines_and_grep_paths() -> None:
    files = _tree({3}, {0, 3})
    text = "$ grep -r . /sys/class/net/eth0/ecn/roce_np\n"
    text += "".join(f"/sys/class/net/eth0/ecn/{k}:{v.strip()}\n" for k, v in files.items() if k.startswith("roce_np"))
    text += "\nroot@h1:~# grep -r . /sys/class/net/eth0/ecn/roce_rp\n"
    text += "".join(f"/sys/class/net/eth0/ecn/{k}:{v.strip()}\n" for k, v in files.items() if k.startswith("roce_rp"))
    assert sysfs_ecn.parse(text, "flat.txt") == sysfs_ecn.parse_tree(files)


def test_flat_bad_line_is_located() -> None:
    files = _tree({3}, {3})
    lines = [f"ecn/{k}: {v.strip()}" for k, v in files.items()]
    bad = lines.index("ecn/roce_np/cnp_dscp: 48")
    lines[bad] = "ecn/roce_np/cnp_dscp: forty-eight"
    log = ParseProblems("flat.txt")
    ecn = sysfs_ecn.parse("\n".join(lines), "flat.txt", log)
    assert ecn.roce_np is not None and ecn.roce_np.params == {"cnp_802p_prio": 6}
    assert [(p.line, p.skipped) for p in log.problems] == [(bad + 1, "roce_np/cnp_dscp")]
