"""Collect many switches live into one bundle: an inventory file, a bounded worker pool, a summary.

Inventory (YAML)::

    defaults:                     # optional, applied to every device
      timeout_s: 10               # each connect and read
      deadline_s: 120             # the whole device, every request (a device that drips bytes is cut off)
      max_bytes: 268435456        # what one device may send (a larger reply is refused, never read whole)
    devices:
      - name: leaf-su1-r0
        os: sonic                 # reads the switch's Redis databases
        address: 10.0.0.11
        port: 6379                # optional
        database_config: /etc/unifab/database_config.json   # optional: DB ids of that image
        password_env: SONIC_REDIS_PASSWORD                  # optional: credential by reference
      - name: spine01
        os: eos                   # eAPI (JSON-RPC over HTTPS)
        address: 10.0.0.21
        username_env: EOS_USER    # defaults: UNIFAB_EOS_USERNAME / UNIFAB_EOS_PASSWORD
        password_env: EOS_PASSWORD
        verify: /etc/ssl/fabric-ca.pem   # true (default), false, or a CA file

Credentials never sit in the file: ``*_env`` names the environment variable that holds them. Each
device is read completely into a staging directory and then renamed into place
(:mod:`unifab.collect.staging`), so a failed or killed collect leaves the previous device directory as it
was; a device whose re-collect failed keeps its previous data, marked stale. Any failure of one device
(transport, decoding, a malformed answer, the deadline, the byte cap, even a bug) is that device's result;
the others go on. ``collect-manifest.json`` records each device's last attempt.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from unifab import layout
from unifab.collect.limits import DEFAULT_DEADLINE_S, DEFAULT_MAX_BYTES, BudgetExceeded
from unifab.collect.staging import BundleWriter, write_file
from unifab.errors import ParseError, UnifabError, UsageError, YamlError, load_yaml
from unifab.platforms import PLATFORMS, platform

__all__ = [
    "DEFAULT_WORKERS",
    "LIVE_ADAPTERS",
    "CollectSummary",
    "Device",
    "DeviceResult",
    "FailureKind",
    "Inventory",
    "collect_inventory",
    "collect_one",
    "load_inventory",
    "summary_json",
]

FailureKind = Literal["unreachable", "auth", "unsupported", "error"]
DEFAULT_WORKERS = 16


class Device(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    os: str  # a platform unifab reads live (see LIVE_ADAPTERS)
    address: str = Field(min_length=1)
    port: int | None = Field(default=None, ge=1, le=65535)
    timeout_s: float = Field(default=10.0, gt=0)
    deadline_s: float = Field(default=DEFAULT_DEADLINE_S, gt=0)
    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1)
    username_env: str | None = None
    password_env: str | None = None
    database_config: Path | None = None
    scheme: Literal["https", "http"] = "https"
    verify: bool | Path = True

    @field_validator("os")
    @classmethod
    def _live_platform(cls, value: str) -> str:
        live = [name for name, p in PLATFORMS.items() if p.live in LIVE_ADAPTERS]
        if value not in live:
            raise ValueError(f"expected one of {', '.join(live)} (the switch OSes unifab reads live), got {value!r}")
        return value


class Inventory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    devices: list[Device] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class DeviceResult:
    name: str
    os: str
    ok: bool
    kind: FailureKind | None = None
    reason: str | None = None
    started: str | None = None
    finished: str | None = None
    stale: bool = False  # failed, and the bundle still holds the device's previous data (marked stale)
    data_from: str | None = None  # when that previous data was collected ("unknown" when it does not say)


@dataclass(frozen=True, slots=True)
class CollectSummary:
    results: tuple[DeviceResult, ...]

    @property
    def failed(self) -> tuple[DeviceResult, ...]:
        return tuple(r for r in self.results if not r.ok)


def load_inventory(text: str, source: str) -> Inventory:
    """Validate an inventory; errors name the key path (``devices.2.os``) and what was expected."""
    try:
        raw = load_yaml(text, source)  # bounded: a recursive alias or an alias bomb is an error naming the line
    except YamlError as exc:
        raise ParseError(source, f"expected YAML ({exc.problem})", line=exc.line) from None
    if not isinstance(raw, dict):
        raise ParseError(source, "expected a mapping with a 'devices' list")
    defaults = raw.pop("defaults", {}) or {}
    if not isinstance(defaults, dict):
        raise ParseError(source, "expected 'defaults' to be a mapping", key="defaults")
    devices = raw.get("devices")
    if isinstance(devices, list):
        raw["devices"] = [{**defaults, **d} if isinstance(d, dict) else d for d in devices]
    try:
        inventory = Inventory.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ParseError(source, f"{first['msg']}", key=key) from None
    names = [d.name for d in inventory.devices]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ParseError(source, f"device name {duplicate!r} appears twice", key="devices")
    return inventory


def _collect_sonic(device: Device, out: Path, env: Mapping[str, str]) -> None:
    from unifab.collect.sonic_redis import DEFAULT_DATABASE_CONFIG, SonicRedis, dump_to_bundle, parse_database_config

    config = DEFAULT_DATABASE_CONFIG
    if device.database_config is not None:
        config = parse_database_config(device.database_config.read_text(), str(device.database_config))
    with SonicRedis(
        device.name,
        host=device.address,
        port=device.port,
        database_config=config,
        username=env.get(device.username_env) if device.username_env else None,
        password=env.get(device.password_env) if device.password_env else None,
        timeout_s=device.timeout_s,
        deadline_s=device.deadline_s,
        max_bytes=device.max_bytes,
    ) as reader:
        dump_to_bundle(reader, out, device.name)


def _collect_eos(device: Device, out: Path, env: Mapping[str, str]) -> None:
    from unifab.collect.eos_eapi import EapiClient, collect_eos

    with EapiClient(
        device.address,
        name=device.name,
        username=env.get(device.username_env) if device.username_env else None,
        password=env.get(device.password_env) if device.password_env else None,
        scheme=device.scheme,
        port=device.port,
        timeout=device.timeout_s,
        verify=device.verify,
        env=env,
        deadline_s=device.deadline_s,
        max_bytes=device.max_bytes,
    ) as client:
        collect_eos(client, out)


# How each platform's live reader (Platform.live) fills a bundle.
LIVE_ADAPTERS: dict[str, Callable[[Device, Path, Mapping[str, str]], None]] = {
    "sonic-redis": _collect_sonic,
    "eos-eapi": _collect_eos,
}


def _classify(exc: Exception) -> tuple[FailureKind, str]:
    from unifab.collect.eos_eapi import EapiAuthError, EapiUnreachable
    from unifab.collect.sonic_redis import SonicRedisError

    if isinstance(exc, EapiUnreachable):
        return "unreachable", str(exc)
    if isinstance(exc, EapiAuthError):
        return "auth", str(exc)
    if isinstance(exc, SonicRedisError):
        if exc.kind in ("unreachable", "auth", "unsupported", "error"):
            return exc.kind, str(exc)  # type: ignore[return-value]  # one of FailureKind, checked just above
        reason = exc.reason.lower()
        kind: FailureKind = "auth" if "auth" in reason or "password" in reason else "unreachable"
        if "not in the database config" in reason:
            kind = "unsupported"
        return kind, str(exc)
    if isinstance(exc, ParseError):
        return "unsupported", f"answer not understood: {exc}"
    if isinstance(exc, BudgetExceeded):
        return ("unreachable" if exc.deadline else "error"), str(exc)
    if isinstance(exc, UnifabError):  # DeviceRefused among them
        return "error", str(exc)
    if isinstance(exc, OSError):  # a local file: the database config, the bundle (a full disk)
        where = f"{exc.filename}: " if exc.filename else ""
        return "error", f"{where}{exc.strerror or exc}"
    return "error", f"internal error: {type(exc).__name__}: {exc}"


def collect_one(device: Device, writer: BundleWriter, env: Mapping[str, str]) -> DeviceResult:
    """Collect one device into a stage and install it; whatever goes wrong is this device's failed result."""
    started = _now()
    try:
        with writer.stage(device.name) as stage:
            LIVE_ADAPTERS[_live(device)](device, stage, env)
            _record(stage / layout.SWITCHES / device.name, device, started)
            writer.install(device.name, device.os, stage)
    except Exception as exc:  # one device's failure, whatever it is, never stops the others
        kind, reason = _classify(exc)
        return _failed(writer, device, started, kind, reason)
    return DeviceResult(device.name, device.os, True, started=started, finished=_now())


def _failed(writer: BundleWriter, device: Device, started: str, kind: FailureKind, reason: str) -> DeviceResult:
    """A failed device keeps its previous data, if any, which is marked stale (``collect.json``'s ``last_attempt``)."""
    finished = _now()
    attempt = {
        "started": started,
        "finished": finished,
        "collector": _live(device),
        "os": device.os,
        "address": device.address,
        "result": "failed",
        "kind": kind,
        "reason": reason,
    }
    try:
        data_from = writer.mark_failed(device.name, attempt)
    except OSError as exc:
        reason += f"; its previous data could not be marked stale: {exc.strerror or exc}"
        data_from = "unknown" if (writer.switches / device.name).exists() else None
    return DeviceResult(
        device.name,
        device.os,
        False,
        kind,
        reason,
        started=started,
        finished=finished,
        stale=data_from is not None,
        data_from=data_from,
    )


def _record(device_dir: Path, device: Device, started: str) -> None:
    """``collect.json`` beside the device's files: which collector read it, as which OS, from where, and when."""
    doc = {
        "version": 1,
        "collector": _live(device),
        "os": device.os,
        "address": device.address,
        "started": started,
        "finished": _now(),
    }
    write_file(device_dir / layout.COLLECT_JSON, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def _live(device: Device) -> str:
    live = platform(device.os, device.name).live
    assert live is not None  # the Device validator admits only platforms with a live reader
    return live


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect_inventory(
    inventory: Inventory,
    out: Path | BundleWriter,
    workers: int = DEFAULT_WORKERS,
    env: Mapping[str, str] | None = None,
    progress: Callable[[DeviceResult], None] | None = None,
) -> CollectSummary:
    """Collect every device concurrently (at most ``workers`` at once); returns one result per device.

    ``out`` is the bundle directory, or a :class:`BundleWriter` already opened on it. Raises ``UsageError``
    when ``out`` cannot be written (a file, an unwritable path) or another collect is writing into it; after
    that, nothing a device does raises. The manifest is written at the end.
    """
    env = os.environ if env is None else env
    results: list[DeviceResult] = []
    by_name = {d.name: d for d in inventory.devices}
    opened = contextlib.nullcontext(out) if isinstance(out, BundleWriter) else BundleWriter(out)
    with opened as writer:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(inventory.devices)))) as pool:
            futures = [pool.submit(collect_one, device, writer, env) for device in inventory.devices]
            for future in as_completed(futures):
                result = future.result()
                results.append(result)
                if progress is not None:
                    progress(result)
        order = {d.name: i for i, d in enumerate(inventory.devices)}
        results.sort(key=lambda r: order[r.name])
        try:
            writer.write_manifest((_manifest_entry(r, by_name[r.name]) for r in results), _now())
        except OSError as exc:
            raise UsageError(f"cannot write {writer.out / layout.COLLECT_MANIFEST}: {exc.strerror or exc}") from None
    return CollectSummary(tuple(results))


def _manifest_entry(result: DeviceResult, device: Device) -> dict[str, Any]:
    return {
        "name": result.name,
        "os": result.os,
        "collector": _live(device),
        "address": device.address,
        "started": result.started,
        "finished": result.finished,
        "result": "ok" if result.ok else "failed",
        "kind": result.kind,
        "reason": result.reason,
        "stale": result.stale if not result.ok else None,
        "data_from": result.data_from,
    }


def summary_json(summary: CollectSummary) -> dict[str, Any]:
    return {
        "devices": len(summary.results),
        "collected": sum(r.ok for r in summary.results),
        "failed": [
            {"name": r.name, "os": r.os, "kind": r.kind, "reason": r.reason, "stale": r.stale, "data_from": r.data_from}
            for r in summary.failed
        ],
    }
