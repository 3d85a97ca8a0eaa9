r"""``ethtool -m <if>`` (ethtool 3.x .. 6.x): decoded module EEPROM and DOM of SFF-8636, CMIS and SFF-8472 modules.

Every line is ``\t<key padded to 41> : <value>`` (``printf("\t%-41s : ...")``); captures with the TAB expanded
or the padding squeezed read the same. The first line is always ``Identifier``::

    Identifier                                : 0x11 (QSFP28)             SFF-8636 (QSFP+/QSFP28)
    Identifier                                : 0x19 (OSFP 8X Pluggable Transceiver)    CMIS (QSFP-DD/OSFP)

Identity (``Vendor name/OUI/PN/rev/SN``) and the diagnostics are modelled; every other descriptive line
(``Extended identifier``, ``Transceiver type``, ``Length (OM3 50um)``, ``Revision Compliance``, ``Power class``,
``Date code`` ...) is kept verbatim and in order in ``info``. Diagnostics, as ``sff-common.h`` prints them::

    Module temperature                        : 30.56 degrees C / 87.01 degrees F
    Module voltage                            : 3.2350 V
    Laser tx bias current (Channel 1)         : 6.750 mA        (CMIS also; "Laser bias current (Channel 1)" read too)
    Transmit avg optical power (Channel 1)    : 1.3924 mW / 1.44 dBm
    Rcvr signal avg optical power(Channel 1)  : 0.9720 mW / -0.12 dBm     (no space before "(" in SFF-8636;
                                                                          "Receiver signal OMA" when rx is OMA)
    Laser bias current high alarm   (Chan 1)  : Off               per-lane flags (tx/rx power use "Channel")
    Module temperature high alarm             : Off               module flags
    Laser output power low alarm threshold    : 0.0724 mW / -11.40 dBm   thresholds (tx power = "output power")

SFF-8472 (SFP) prints the same keys without ``(Channel N)`` (``Laser output power``, ``Receiver signal average
optical power``); they read as lane 1. Power is kept in mW and dBm as printed; a dark lane prints ``0.0000 mW /
-inf dBm`` (older ethtool) and reads as ``rx_power_dbm=None`` with ``rx_power_mw=0.0``; newer ethtool clamps to
``-40.00 dBm``, kept as printed. When only mW is printed the dBm value is computed (rounded to 0.01 like ethtool).
A module without DOM (passive DAC) prints ``Module temperature 0.00`` and ``Module voltage 0.0000`` under SFF-8636
and nothing under CMIS; the values are kept as printed, and such a module has no ``lanes``.

With a :class:`~unifab.errors.ParseProblems` collector a line that cannot be read (no ``key : value``, a value
off its grammar, a key printed twice) costs that line's one value, named at it, and the rest is read; a lost
first line costs the identifier (the lines after it are still read). A text with problems and no identifier,
identity or diagnostic read raises the first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = [
    "CMIS_IDENTIFIERS",
    "CMIS_MODULE_STATES",
    "SFF8472_IDENTIFIERS",
    "SFF8636_IDENTIFIERS",
    "Flags",
    "Lane",
    "Levels",
    "ModuleEeprom",
    "Thresholds",
    "dump",
    "mw_to_dbm",
    "parse",
]

# SFF-8024 identifiers ethtool decodes with its CMIS parser (QSFP-DD, OSFP, QSFP+ with CMIS) or SFF-8472 parser.
CMIS_IDENTIFIERS = frozenset({0x18, 0x19, 0x1E})
SFF8636_IDENTIFIERS = frozenset({0x0C, 0x0D, 0x11})
SFF8472_IDENTIFIERS = frozenset({0x03})
CMIS_MODULE_STATES = {
    "ModuleLowPwr": 0x01,
    "ModulePwrUp": 0x02,
    "ModuleReady": 0x03,
    "ModulePwrDn": 0x04,
    "ModuleFault": 0x05,
}
# Descriptive keys ethtool prints after the vendor block (so dump can put the vendor block before them).
_AFTER_VENDOR = frozenset(
    {
        "Date code",
        "CLEI code",
        "Revision Compliance",
        "Revision compliance",
        "Module State",
        "Module Fault Cause",
        "LowPwrAllowRequestHW",
        "LowPwrRequestSW",
    }
)
_VENDOR_KEYS = {
    "Vendor name": "vendor",
    "Vendor OUI": "vendor_oui",
    "Vendor PN": "part_number",
    "Vendor rev": "vendor_rev",
    "Vendor SN": "serial_number",
}
_KIND_ORDER = ("high_alarm", "low_alarm", "high_warning", "low_warning")
_QUANTITY = {
    "Laser bias current": "bias",
    "Laser tx bias current": "bias",
    "Laser tx power": "tx",
    "Laser output power": "tx",
    "Laser rx power": "rx",
    "Module temperature": "temperature",
    "Module voltage": "voltage",
}

_IDENTIFIER = re.compile(r"^0x(?P<code>[0-9a-fA-F]{2})(?: \((?P<name>.*)\))?$")
_STATE = re.compile(r"^0x(?P<code>[0-9a-fA-F]{2}) \((?P<name>\w+)\)$")
_NUMBER = r"-?\d+(?:\.\d+)?"
_TEMP = re.compile(rf"^(?P<c>{_NUMBER}) degrees C(?: / {_NUMBER} degrees F)?$")
_VOLT = re.compile(rf"^(?P<v>{_NUMBER}) V$")
_BIAS = re.compile(rf"^(?P<ma>{_NUMBER}) mA$")
_POWER = re.compile(rf"^(?:(?P<mw>{_NUMBER}) mW)?(?:(?:^| / )(?P<dbm>-?inf|{_NUMBER}) dBm)?$")
_CHANNEL = r"(?:\s*\((?:Channel|Chan) (?P<lane>\d{1,9})\))?"
_MONITOR = re.compile(
    r"^(?P<what>Laser (?:tx )?bias current|Transmit avg optical power|Laser output power"
    r"|Rcvr signal avg optical power|Receiver signal OMA|Receiver signal average optical power)" + _CHANNEL + "$"
)
_THRESHOLD = re.compile(
    r"^(?P<what>Laser bias current|Laser output power|Module temperature|Module voltage|Laser rx power)"
    r" (?P<kind>high alarm|low alarm|high warning|low warning) threshold$"
)
_FLAG = re.compile(
    r"^(?P<what>Laser bias current|Laser tx bias current|Laser tx power|Laser output power|Laser rx power"
    r"|Module temperature|Module voltage) (?P<kind>high alarm|low alarm|high warning|low warning)" + _CHANNEL + "$"
)


# key -> (kind, what, level, lane): the three key grammars matched once per distinct key, not once per line
# (every module of a fleet prints the same few hundred keys); bounded so hostile input cannot grow it
_Class = tuple[str, str, str, str | None]
_CLASSIFIED: dict[str, _Class] = {}
_MAX_CLASSIFIED = 4096


# keys line() reads itself before classifying: never "info" for the fast path in parse()
_NAMED = frozenset(
    {
        "Identifier",
        *_VENDOR_KEYS,
        "Module State",
        "Module temperature",
        "Module voltage",
        "Alarm/warning flags implemented",
    }
)


def _classify(key: str) -> _Class:
    if key in _NAMED:
        return "named", "", "", None
    if m := _THRESHOLD.match(key):
        return "threshold", _QUANTITY[m["what"]], m["kind"].replace(" ", "_"), None
    if m := _MONITOR.match(key):
        return "monitor", m["what"], "", m["lane"]
    if m := _FLAG.match(key):
        return "flag", _QUANTITY[m["what"]], m["kind"].replace(" ", "_"), m["lane"]
    return "info", "", "", None


def _classified(key: str) -> _Class:
    found = _CLASSIFIED.get(key)
    if found is None:
        found = _classify(key)
        if len(_CLASSIFIED) < _MAX_CLASSIFIED:
            _CLASSIFIED[key] = found
    return found


@dataclass(frozen=True, slots=True)
class Flags:
    """Alarm/warning flags of one monitored quantity (None: that flag was not printed)."""

    high_alarm: bool | None = None
    low_alarm: bool | None = None
    high_warning: bool | None = None
    low_warning: bool | None = None


@dataclass(frozen=True, slots=True)
class Levels:
    """Alarm/warning threshold levels of one monitored quantity (None: not printed, or -inf dBm)."""

    high_alarm: float | None = None
    low_alarm: float | None = None
    high_warning: float | None = None
    low_warning: float | None = None


@dataclass(frozen=True, slots=True)
class Lane:
    lane: int  # 1-based channel number as printed
    bias_ma: float | None = None
    tx_power_mw: float | None = None
    tx_power_dbm: float | None = None
    rx_power_mw: float | None = None
    rx_power_dbm: float | None = None
    bias_flags: Flags | None = None
    tx_power_flags: Flags | None = None
    rx_power_flags: Flags | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    temperature_c: Levels | None = None
    voltage_v: Levels | None = None
    bias_ma: Levels | None = None
    tx_power_mw: Levels | None = None
    tx_power_dbm: Levels | None = None
    rx_power_mw: Levels | None = None
    rx_power_dbm: Levels | None = None


@dataclass(frozen=True, slots=True)
class ModuleEeprom:
    spec: str | None  # "sff-8636" | "cmis" | "sff-8472" | None (identifier ethtool decodes otherwise)
    identifier_code: int | None  # SFF-8024 identifier byte (0x11 = QSFP28, 0x19 = OSFP)
    identifier: str | None  # its name as printed ("QSFP28")
    vendor: str | None = None
    vendor_oui: str | None = None
    part_number: str | None = None
    vendor_rev: str | None = None
    serial_number: str | None = None
    module_state: str | None = None  # CMIS: "ModuleReady" ... (the raw value when not a known state)
    temperature_c: float | None = None
    voltage_v: float | None = None
    alarm_flags_implemented: bool | None = None  # SFF-8636 "Alarm/warning flags implemented"
    rx_power_type: str | None = None  # "avg" | "oma" (from the rx power label)
    temperature_flags: Flags | None = None
    voltage_flags: Flags | None = None
    lanes: tuple[Lane, ...] = ()
    thresholds: Thresholds | None = None
    info: tuple[tuple[str, str], ...] = ()  # every other "key : value" line, verbatim and in order


@dataclass(slots=True)
class _LaneBuild:
    values: dict[str, float | None] = field(default_factory=dict)
    flags: dict[str, dict[str, bool]] = field(default_factory=dict)


def mw_to_dbm(mw: float) -> float | None:
    """ethtool's ``10 * log10(mW)`` rounded to 0.01; None for 0 mW (ethtool prints -inf)."""
    return round(10.0 * math.log10(mw), 2) if mw > 0 else None


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.number = 0
        self.identity: dict[str, str] = {}
        self.identifier_code: int | None = None
        self.identifier: str | None = None
        self.module_state: str | None = None
        self.scalars: dict[str, float] = {}
        self.alarm_flags: bool | None = None
        self.rx_type: str | None = None
        self.module_flags: dict[str, dict[str, bool]] = {}
        self.lanes: dict[int, _LaneBuild] = {}
        self.levels: dict[str, dict[str, float | None]] = {}
        self.info: list[tuple[str, str]] = []
        self.seen: set[str] = set()
        self.started = False  # the first line (Identifier) was read, or lost with a collector

    def fail(self, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=self.number)

    def once(self, key: str) -> None:
        if key in self.seen:
            raise self.fail(f"expected {key!r} once")
        self.seen.add(key)

    def number_of(self, pattern: re.Pattern[str], value: str, group: str, what: str) -> float:
        m = pattern.match(value)
        if m is None:
            raise self.fail(f"expected {what}, got {value[:40]!r}")
        return float(m[group])

    def power(self, value: str) -> tuple[float | None, float | None]:
        m = _POWER.match(value)
        if m is None or (m["mw"] is None and m["dbm"] is None):
            raise self.fail(f"expected '<mW> mW / <dBm> dBm', got {value[:40]!r}")
        mw = None if m["mw"] is None else float(m["mw"])
        if m["dbm"] is None:
            return mw, None if mw is None else mw_to_dbm(mw)
        return mw, None if m["dbm"].endswith("inf") else float(m["dbm"])

    def on_off(self, value: str) -> bool:
        if value not in ("On", "Off"):
            raise self.fail(f"expected On or Off, got {value[:40]!r}")
        return value == "On"

    def lane(self, text: str | None) -> _LaneBuild:
        number = 1 if text is None else int(text)
        if not 1 <= number <= 64:
            raise self.fail(f"expected a channel number 1..64, got {number}")
        return self.lanes.setdefault(number, _LaneBuild())

    def line(self, key: str, value: str) -> None:
        if key == "Identifier":
            self.started = True
            self.once(key)
            m = _IDENTIFIER.match(value)
            if m is None:
                raise self.fail(f"expected 'Identifier : 0x<hex> (<name>)', got {value[:40]!r}")
            self.identifier_code = int(m["code"], 16)
            self.identifier = m["name"]
        elif key in _VENDOR_KEYS:
            self.once(key)
            self.identity[_VENDOR_KEYS[key]] = value
        elif key == "Module State":
            self.once(key)
            m = _STATE.match(value)
            known = m is not None and CMIS_MODULE_STATES.get(m["name"]) == int(m["code"], 16)
            self.module_state = m["name"] if m is not None and known else value
        elif key == "Module temperature":
            self.once(key)
            self.scalars["temperature"] = self.number_of(_TEMP, value, "c", "'<C> degrees C / <F> degrees F'")
        elif key == "Module voltage":
            self.once(key)
            self.scalars["voltage"] = self.number_of(_VOLT, value, "v", "'<volts> V'")
        elif key == "Alarm/warning flags implemented":
            self.once(key)
            if value not in ("Yes", "No"):
                raise self.fail(f"expected Yes or No, got {value[:40]!r}")
            self.alarm_flags = value == "Yes"
        else:
            kind, what, level, lane = _classified(key)
            if kind == "threshold":
                self.once(key)
                self.threshold(what, level, value)
            elif kind == "monitor":
                self.once(key)
                self.monitor(what, lane, value)
            elif kind == "flag":
                self.once(key)
                self.flag(what, level, lane, self.on_off(value))
            else:
                self.info.append((key, value))

    def threshold(self, quantity: str, kind: str, value: str) -> None:
        if quantity in ("tx", "rx"):
            mw, dbm = self.power(value)
            self.levels.setdefault(f"{quantity}_mw", {})[kind] = mw
            self.levels.setdefault(f"{quantity}_dbm", {})[kind] = dbm
            return
        pattern, group, what = {
            "bias": (_BIAS, "ma", "'<mA> mA'"),
            "temperature": (_TEMP, "c", "'<C> degrees C / <F> degrees F'"),
            "voltage": (_VOLT, "v", "'<volts> V'"),
        }[quantity]
        self.levels.setdefault(quantity, {})[kind] = self.number_of(pattern, value, group, what)

    def monitor(self, what: str, lane_text: str | None, value: str) -> None:
        lane = self.lane(lane_text)
        if "bias" in what:
            lane.values["bias"] = self.number_of(_BIAS, value, "ma", "'<mA> mA'")
            return
        mw, dbm = self.power(value)
        if what in ("Transmit avg optical power", "Laser output power"):
            lane.values["tx_mw"], lane.values["tx_dbm"] = mw, dbm
            return
        rx_type = "oma" if "OMA" in what else "avg"
        if self.rx_type not in (None, rx_type):
            raise self.fail("expected one kind of receiver power (average or OMA) on every lane")
        self.rx_type = rx_type
        lane.values["rx_mw"], lane.values["rx_dbm"] = mw, dbm

    def flag(self, quantity: str, kind: str, lane_text: str | None, on: bool) -> None:
        if quantity in ("temperature", "voltage"):
            if lane_text is not None:
                raise self.fail(f"expected no channel on a module {quantity} flag")
            self.module_flags.setdefault(quantity, {})[kind] = on
        else:
            lane = self.lanes.get(int(lane_text)) if lane_text is not None and lane_text.isdigit() else None
            (lane or self.lane(lane_text)).flags.setdefault(quantity, {})[kind] = on

    def spec(self) -> str | None:
        code = self.identifier_code
        if code in CMIS_IDENTIFIERS or "Module State" in self.seen:
            return "cmis"
        if code in SFF8636_IDENTIFIERS:
            return "sff-8636"
        if code in SFF8472_IDENTIFIERS:
            return "sff-8472"
        return None

    def read_any(self) -> bool:
        """Something beyond descriptive lines was read."""
        return bool(
            self.identifier_code is not None or self.identity or self.scalars or self.lanes or self.levels
            or self.module_flags or self.module_state is not None or self.alarm_flags is not None
        )  # fmt: skip

    def result(self) -> ModuleEeprom:
        lanes = tuple(_lane(number, self.lanes[number]) for number in sorted(self.lanes))
        thresholds = None
        if self.levels:
            thresholds = Thresholds(
                **{
                    name: _levels(self.levels.get(key))
                    for name, key in (
                        ("temperature_c", "temperature"),
                        ("voltage_v", "voltage"),
                        ("bias_ma", "bias"),
                        ("tx_power_mw", "tx_mw"),
                        ("tx_power_dbm", "tx_dbm"),
                        ("rx_power_mw", "rx_mw"),
                        ("rx_power_dbm", "rx_dbm"),
                    )
                }
            )
        return ModuleEeprom(
            spec=self.spec(),
            identifier_code=self.identifier_code,
            identifier=self.identifier,
            vendor=self.identity.get("vendor"),
            vendor_oui=self.identity.get("vendor_oui"),
            part_number=self.identity.get("part_number"),
            vendor_rev=self.identity.get("vendor_rev"),
            serial_number=self.identity.get("serial_number"),
            module_state=self.module_state,
            temperature_c=self.scalars.get("temperature"),
            voltage_v=self.scalars.get("voltage"),
            alarm_flags_implemented=self.alarm_flags,
            rx_power_type=self.rx_type,
            temperature_flags=_flags(self.module_flags.get("temperature")),
            voltage_flags=_flags(self.module_flags.get("voltage")),
            lanes=lanes,
            thresholds=thresholds,
            info=tuple(self.info),
        )


def _flags(values: dict[str, bool] | None) -> Flags | None:
    return None if values is None else Flags(**values)


def _levels(values: dict[str, float | None] | None) -> Levels | None:
    return None if values is None else Levels(**values)


def _lane(number: int, b: _LaneBuild) -> Lane:
    v = b.values
    return Lane(
        lane=number,
        bias_ma=v.get("bias"),
        tx_power_mw=v.get("tx_mw"),
        tx_power_dbm=v.get("tx_dbm"),
        rx_power_mw=v.get("rx_mw"),
        rx_power_dbm=v.get("rx_dbm"),
        bias_flags=_flags(b.flags.get("bias")),
        tx_power_flags=_flags(b.flags.get("tx")),
        rx_power_flags=_flags(b.flags.get("rx")),
    )


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> ModuleEeprom:
    """Read decoded ``ethtool -m`` output; raise :class:`ParseError` on anything off-grammar.

    With ``problems`` a line that cannot be read costs its value (see the module docstring).
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    parser = _Parser(source)
    seen = parser.seen
    for number, raw in enumerate(text.split("\n"), start=1):
        key, colon, value = raw.partition(":")
        key = key.strip()
        if (not colon or not key) and not raw.strip():
            continue
        parser.number = number
        try:
            if not colon or not key:
                raise parser.fail(f"expected '<key> : <value>', got {raw.strip()[:60]!r}")
            value = value.strip()
            found = _CLASSIFIED.get(key)
            if found is not None and parser.started:
                # the commonest lines (flags, a fifth to a half of a module's, and descriptive ones): handled
                # here, as line() would
                if found[0] == "info":
                    parser.info.append((key, value))
                    continue
                if found[0] == "flag":
                    if key in seen:
                        raise parser.fail(f"expected {key!r} once")
                    seen.add(key)
                    parser.flag(found[1], found[2], found[3], parser.on_off(value))
                    continue
            if not parser.started and key != "Identifier":
                raise parser.fail(f"expected 'Identifier : 0x..' first (decoded ethtool -m), got {raw.strip()[:60]!r}")
            parser.line(key, value)
        except ParseError as exc:
            if log.is_strict:
                raise
            log.record(exc, f"the {key!r} value of line {number}" if colon and key else f"line {number}")
            parser.started = True  # a lost first line costs the identifier; the lines after it are read
    if parser.identifier_code is None and (not log.problems or not parser.read_any()):
        if log.problems:
            raise log.problems[0].error()
        raise ParseError(source, "expected ethtool -m output, got empty text", line=1)
    return parser.result()


# --- dump ---------------------------------------------------------------------------------------


def _kv(key: str, value: str) -> str:
    return f"\t{key:<41} : {value}\n"


def _temp(c: float) -> str:
    return f"{c:.2f} degrees C / {c * 1.8 + 32.0:.2f} degrees F"


def _power_text(mw: float | None, dbm: float | None) -> str | None:
    if mw is None:
        return None if dbm is None else f"{dbm:.2f} dBm"
    return f"{mw:.4f} mW / " + ("-inf dBm" if dbm is None else f"{dbm:.2f} dBm")


def _flag_label(quantity: str, kind: str, lane: int) -> str:
    words = kind.replace("_", " ")
    if quantity == "bias":
        return f"Laser bias current {words:<12} (Chan {lane})"
    return f"Laser {quantity} power {words:<12} (Channel {lane})"


def _lane_flags(lane: Lane, quantity: str) -> list[str]:
    flags = {"bias": lane.bias_flags, "tx": lane.tx_power_flags, "rx": lane.rx_power_flags}[quantity]
    if flags is None:
        return []
    out = []
    for kind in _KIND_ORDER:
        value = getattr(flags, kind)
        if value is not None:
            out.append(_kv(_flag_label(quantity, kind, lane.lane), "On" if value else "Off"))
    return out


def _module_flags(name: str, flags: Flags | None) -> list[str]:
    if flags is None:
        return []
    return [
        _kv(f"{name} {kind.replace('_', ' ')}", "On" if getattr(flags, kind) else "Off")
        for kind in _KIND_ORDER
        if getattr(flags, kind) is not None
    ]


def _threshold_lines(t: Thresholds) -> list[str]:
    out: list[str] = []
    rows: tuple[tuple[str, Levels | None, Levels | None, str], ...] = (
        ("Laser bias current", t.bias_ma, None, "bias"),
        ("Laser output power", t.tx_power_mw, t.tx_power_dbm, "power"),
        ("Module temperature", t.temperature_c, None, "temperature"),
        ("Module voltage", t.voltage_v, None, "voltage"),
        ("Laser rx power", t.rx_power_mw, t.rx_power_dbm, "power"),
    )
    for name, levels, dbm_levels, kind in rows:
        for level in _KIND_ORDER:
            value = None if levels is None else getattr(levels, level)
            key = f"{name} {level.replace('_', ' ')} threshold"
            if kind == "power":
                text = _power_text(value, None if dbm_levels is None else getattr(dbm_levels, level))
                if text is not None:
                    out.append(_kv(key, text))
            elif value is not None:
                out.append(
                    _kv(key, {"bias": f"{value:.3f} mA", "temperature": _temp(value)}.get(kind, f"{value:.4f} V"))
                )
    return out


def _state_text(state: str) -> str:
    code = CMIS_MODULE_STATES.get(state)
    return state if code is None else f"0x{code:02x} ({state})"


def _header(m: ModuleEeprom) -> list[str]:
    out = []
    if m.identifier_code is not None:
        name = "" if m.identifier is None else f" ({m.identifier})"
        out.append(_kv("Identifier", f"0x{m.identifier_code:02x}{name}"))
    split = next((i for i, (key, _) in enumerate(m.info) if key in _AFTER_VENDOR), len(m.info))
    out += [_kv(k, v) for k, v in m.info[:split]]
    for key, attr in _VENDOR_KEYS.items():
        value = getattr(m, attr)
        if value is not None:
            out.append(_kv(key, value))
    after = list(m.info[split:])
    if m.module_state is not None:
        at = next((i + 1 for i, (k, _) in enumerate(after) if k.lower() == "revision compliance"), None)
        if at is None:
            at = next((i for i, (k, _) in enumerate(after) if k not in ("Date code", "CLEI code")), len(after))
        after.insert(at, ("Module State", _state_text(m.module_state)))
    out += [_kv(k, v) for k, v in after]
    return out


def dump(m: ModuleEeprom) -> str:
    """Write ``m`` the way ethtool's SFF-8636 (``qsfp.c``) or CMIS (``cmis.c``) decoder prints it."""
    if m.spec == "sff-8472":
        raise ValueError("dump writes the SFF-8636 and CMIS layouts, not SFF-8472 (SFP)")
    cmis = m.spec == "cmis"
    out = _header(m)
    if m.temperature_c is not None:
        out.append(_kv("Module temperature", _temp(m.temperature_c)))
    if m.voltage_v is not None:
        out.append(_kv("Module voltage", f"{m.voltage_v:.4f} V"))
    if m.alarm_flags_implemented is not None:
        out.append(_kv("Alarm/warning flags implemented", "Yes" if m.alarm_flags_implemented else "No"))
    rx_label = "Receiver signal OMA" if m.rx_power_type == "oma" else "Rcvr signal avg optical power"
    rx_space = " " if cmis else ""
    for lane in m.lanes:
        if lane.bias_ma is not None:
            out.append(_kv(f"Laser tx bias current (Channel {lane.lane})", f"{lane.bias_ma:.3f} mA"))
    for lane in m.lanes:
        if (text := _power_text(lane.tx_power_mw, lane.tx_power_dbm)) is not None:
            out.append(_kv(f"Transmit avg optical power (Channel {lane.lane})", text))
    for lane in m.lanes:
        if (text := _power_text(lane.rx_power_mw, lane.rx_power_dbm)) is not None:
            out.append(_kv(f"{rx_label}{rx_space}(Channel {lane.lane})", text))
    if cmis:
        out += _module_flags("Module temperature", m.temperature_flags)
        out += _module_flags("Module voltage", m.voltage_flags)
        for lane in m.lanes:
            out += _lane_flags(lane, "bias") + _lane_flags(lane, "tx") + _lane_flags(lane, "rx")
    else:
        for lane in m.lanes:
            out += _lane_flags(lane, "bias")
        out += _module_flags("Module temperature", m.temperature_flags)
        out += _module_flags("Module voltage", m.voltage_flags)
        for quantity in ("tx", "rx"):
            for lane in m.lanes:
                out += _lane_flags(lane, quantity)
    if m.thresholds is not None:
        out += _threshold_lines(m.thresholds)
    return "".join(out)
