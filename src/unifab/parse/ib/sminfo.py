"""``sminfo`` (infiniband-diags 1.x .. 50.x): the subnet manager the fabric answers to.

One line::

    sminfo: sm lid 1 sm guid 0xa088c20300b10001, activity count 1553 priority 0 state 3 SMINFO_MASTER

The state is SMInfo's SMState: 0 not active, 1 discovering, 2 standby, 3 master. The activity count grows while
the SM is alive, so two readings a few seconds apart that do not differ mean a stuck (or dead) master.

When no SM answers, sminfo prints no such line, only its failure (stderr, kept with ``2>&1``)::

    ibwarn: [23244] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0)
    sminfo: iberror: failed: query

:func:`no_answer` tells that reading (no subnet manager, or none at the LID asked) from a file that is not sminfo's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import content_lines, parse_guid, skippable

__all__ = ["SM_STATES", "SmInfo", "no_answer", "parse"]

# SMState value -> the name sminfo prints after the number.
SM_STATES = {0: "SMINFO_NOTACT", 1: "SMINFO_DISCOVER", 2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}
_ROLES = {0: "notactive", 1: "discovering", 2: "standby", 3: "master"}

_LINE = re.compile(
    r"^(?:sminfo:\s*)?sm lid (\d+) sm guid (0x[0-9a-fA-F]+), activity count (\d+) priority (\d+) state (\d+)"
    r"(?:\s+(\S+))?\s*$"
)


@dataclass(frozen=True, slots=True)
class SmInfo:
    """The SM's own SMInfo: where it is (``sm_lid``, ``sm_guid`` = its port GUID), ``priority`` 0..15,
    ``state`` 0..3 (``state_name`` as printed: ``SMINFO_MASTER``), ``activity_count`` (a heartbeat)."""

    sm_lid: int
    sm_guid: int
    activity_count: int
    priority: int
    state: int
    state_name: str

    @property
    def role(self) -> str:
        """``master`` | ``standby`` | ``discovering`` | ``notactive``."""
        return _ROLES.get(self.state, f"state {self.state}")

    @property
    def is_master(self) -> bool:
        return self.state == 3


_FAILED = re.compile(r"sminfo: iberror: (?:\[pid \d+\] )?(?:\w+: )?failed: query")


def no_answer(text: str) -> bool:
    """Whether ``text`` is sminfo's output when no subnet manager answered: its ``iberror: failed: query`` line,
    with nothing but ``ibwarn:`` lines (and pasted prompts) around it."""
    lines = [line.strip() for _number, line in content_lines(text) if not skippable(line)]
    return any(_FAILED.fullmatch(line) for line in lines) and all(
        _FAILED.fullmatch(line) or line.startswith("ibwarn: ") for line in lines
    )


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> SmInfo:
    """The one ``sminfo:`` line (prompt and blank lines around it are ignored). ``problems`` is accepted for
    the common signature; a single-record format has nothing to skip, so every problem raises."""
    del problems
    found: SmInfo | None = None
    for number, line in content_lines(text):
        m = _LINE.match(line.strip())
        if m is None:
            if skippable(line):
                continue
            raise ParseError(
                source,
                "expected 'sminfo: sm lid N sm guid 0x..., activity count N priority N state N SMINFO_...'",
                line=number,
            )
        if found is not None:
            raise ParseError(source, "expected one sminfo line, found a second", line=number)
        state = int(m.group(5))
        if state > 3:
            raise ParseError(source, f"expected SM state 0..3, got {state}", line=number)
        priority = int(m.group(4))
        if priority > 15:
            raise ParseError(source, f"expected SM priority 0..15, got {priority}", line=number)
        lid = int(m.group(1))
        if lid > 0xFFFF:
            raise ParseError(source, f"expected an SM LID in 0..65535, got {lid}", line=number)
        found = SmInfo(
            sm_lid=lid,
            sm_guid=parse_guid(m.group(2), source, number, "the SM GUID"),
            activity_count=int(m.group(3)),
            priority=priority,
            state=state,
            state_name=m.group(6) or SM_STATES.get(state, str(state)),
        )
    if found is None:
        raise ParseError(source, "expected an 'sminfo: sm lid ...' line", line=1)
    return found
