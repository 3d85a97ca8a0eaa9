"""The MLNX_OFED ``ecn/`` sysfs tree, as a mapping and as flattened ``path: value`` lines."""

from __future__ import annotations

import pytest

from unifab.errors import ParseError
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
