"""``lsmod`` and ``/proc/modules``: both shapes, ``-``/``_`` matching, errors, round trip, fuzz.

No capture of either is in the sample corpus; the texts below follow kmod's ``lsmod`` (``%-19s %8lu  %d`` and
the holders) and the kernel's ``/proc/modules`` (``m_show`` in kernel/module/procfs.c) line formats.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host import lsmod

LSMOD = """Module                  Size  Used by
nvidia_peermem         16384  0
nvidia_uvm           1540096  0
nvidia              56692736  3 nvidia_uvm,nvidia_peermem,nvidia_modeset
ib_core               434176  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm
mlx_compat             20480  1 [permanent]
"""
PROC_MODULES = """nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)
nvidia 56692736 3 nvidia_uvm,nvidia_peermem,nvidia_modeset, Live 0x0000000000000000 (POE)
tls 151552 - - Live 0x0000000000000000
"""


def test_lsmod() -> None:
    record = lsmod.parse(LSMOD, "lsmod.txt")
    assert [m.name for m in record.modules] == ["nvidia_peermem", "nvidia_uvm", "nvidia", "ib_core", "mlx_compat"]
    assert record.modules[2].holders == ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset")
    assert record.modules[4].holders == () and record.modules[4].refcount == 1
    assert record.loaded("nvidia-peermem") and record.loaded("nvidia_peermem") and not record.loaded("nv_peer_mem")


def test_proc_modules() -> None:
    record = lsmod.parse(PROC_MODULES, "/proc/modules")
    assert record.names() == {"nvidia_peermem", "nvidia", "tls"}
    assert record.modules[1].holders == ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset")
    assert record.modules[2].refcount is None and record.modules[0].holders == ()


def test_round_trip() -> None:
    record = lsmod.parse(LSMOD)
    assert lsmod.parse(lsmod.dump(record)) == record


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("Module Size Used by\nnvidia x 0\n", 2, "expected '<module> <size>"),
        ("nvidia 100\n", 1, "expected '<module> <size>"),
        ("nvidia 100 many\n", 1, "use count"),
        ("a 1 0\na 2 0\n", 2, "each module once"),
        ("bad;name 1 0\n", 1, "expected '<module> <size>"),
    ],
)
def test_errors_name_the_line(text: str, line: int, says: str) -> None:
    with pytest.raises(ParseError) as err:
        lsmod.parse(text, "lsmod.txt")
    assert err.value.line == line and says in err.value.expected


def test_empty_is_no_module() -> None:
    assert lsmod.parse("Module                  Size  Used by\n").modules == ()


@given(st.text(max_size=200))
def test_any_text_parses_or_raises_parse_error(text: str) -> None:
    with contextlib.suppress(ParseError):
        lsmod.parse(text)


def test_a_bad_line_costs_that_module_only() -> None:
    lines = LSMOD.split("\n")
    bad = next(n for n, line in enumerate(lines, start=1) if line.startswith("nvidia "))
    lines[bad - 1] = "nvidia  big  3 nvidia_uvm"
    log = ParseProblems("lsmod.txt")
    got = lsmod.parse("\n".join(lines), "lsmod.txt", log)
    (problem,) = log.problems
    assert problem.line == bad and "module" in problem.skipped
    assert got.names() == lsmod.parse(LSMOD).names() - {"nvidia"}
    with pytest.raises(ParseError):
        lsmod.parse("\n".join(lines))  # without a collector the first bad line is still an error
    with pytest.raises(ParseError):
        lsmod.parse("Module Size Used by\nnot a module line\n", "x", ParseProblems("x"))  # nothing usable
