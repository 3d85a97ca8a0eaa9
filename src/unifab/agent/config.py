"""``unifab agent run``'s settings: a YAML file (``--config``) with exactly the keys of :data:`KEYS`, and the
command line's flags over it. Every problem is one :class:`~unifab.errors.UsageError` naming the file, the
key (and its line) and what was expected; the command exits 2 with it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unifab.errors import UsageError, YamlError, compose_yaml, construct_yaml

__all__ = ["DEFAULT_SPOOL_DIR", "KEYS", "AgentConfig", "build_config", "read_config_file"]

KEYS = (
    "controller",
    "token_file",
    "interval",
    "spool_dir",
    "spool_max_bytes",
    "spool_max_snapshots",
    "root",
    "hostname",
    "command_timeout",
    "sudo",
)
DEFAULT_SPOOL_DIR = "/var/lib/unifab-agent/spool"  # or $STATE_DIRECTORY/spool under systemd's StateDirectory=
DEFAULT_INTERVAL = 60.0
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_SNAPSHOTS = 1000
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class AgentConfig:
    controller: str  # http(s)://host:port of a unifab serve
    token_file: Path
    interval: float = DEFAULT_INTERVAL
    spool_dir: Path = Path(DEFAULT_SPOOL_DIR)
    spool_max_bytes: int = DEFAULT_MAX_BYTES
    spool_max_snapshots: int = DEFAULT_MAX_SNAPSHOTS
    root: Path = Path("/")
    hostname: str = ""
    command_timeout: float = DEFAULT_TIMEOUT
    sudo: bool = False  # run the collect's root-only reads through sudo -n (the allow-list of `agent sudoers`)


def read_config_file(path: Path) -> dict[str, Any]:
    """The file's keys and values (not yet checked against each other); :class:`UsageError` naming the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--config {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        node = compose_yaml(text, str(path))
        raw = None if node is None else construct_yaml(node, str(path))
    except YamlError as exc:
        raise UsageError(str(exc)) from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UsageError(f"{path}: expected a mapping of {', '.join(KEYS)}, got {type(raw).__name__}")
    lines = _key_lines(node)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"{path}:{lines[key]}" if key in lines else str(path)
        if key not in KEYS:
            raise UsageError(f"{where}: unknown key {key!r}; the keys are {', '.join(KEYS)}")
        out[key] = (value, where)
    return out


def _key_lines(node: Any) -> dict[Any, int]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def build_config(file_values: Mapping[str, Any], flags: Mapping[str, Any]) -> AgentConfig:
    """The settings: ``flags`` (the command line; ``None`` = not given) over ``file_values`` (from
    :func:`read_config_file`: key -> (value, where)) over the defaults. Checked here, key by key."""
    merged: dict[str, tuple[Any, str]] = dict(file_values)
    for key, value in flags.items():
        if value is not None:
            merged[key] = (value, f"--{key.replace('_', '-')}")

    def get(key: str) -> tuple[Any, str] | None:
        return merged.get(key)

    controller = _controller(get("controller"))
    token = get("token_file")
    if token is None or token[0] in (None, ""):
        raise UsageError("token_file: required (--token-file FILE or token_file: in --config)")
    if not isinstance(token[0], str | Path):
        raise UsageError(f"{token[1]}: token_file must be a file path, got {token[0]!r}")
    from unifab.sources import parse_size

    size = get("spool_max_bytes")
    if size is None:
        max_bytes = DEFAULT_MAX_BYTES
    elif isinstance(size[0], int) and not isinstance(size[0], bool):
        max_bytes = _positive_int(size, "spool_max_bytes")
    elif isinstance(size[0], str):
        max_bytes = parse_size(size[0], f"{size[1]}: spool_max_bytes")
    else:
        raise UsageError(f"{size[1]}: spool_max_bytes must be a size such as 256M, got {size[0]!r}")
    return AgentConfig(
        controller=controller,
        token_file=Path(token[0]),
        interval=_positive_float(get("interval"), "interval", DEFAULT_INTERVAL),
        spool_dir=_path(get("spool_dir"), "spool_dir", default_spool_dir()),
        spool_max_bytes=max_bytes,
        spool_max_snapshots=_positive_int(get("spool_max_snapshots"), "spool_max_snapshots", DEFAULT_MAX_SNAPSHOTS),
        root=_path(get("root"), "root", Path("/")),
        hostname=_hostname(get("hostname")),
        command_timeout=_positive_float(get("command_timeout"), "command_timeout", DEFAULT_TIMEOUT),
        sudo=_flag(get("sudo"), "sudo"),
    )


def default_spool_dir() -> Path:
    state = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    return Path(state) / "spool" if state else Path(DEFAULT_SPOOL_DIR)


def _controller(item: tuple[Any, str] | None) -> str:
    if item is None or item[0] in (None, ""):
        raise UsageError("controller: required (--controller URL or controller: in --config)")
    value, where = item
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise UsageError(f"{where}: controller must be an http:// or https:// URL of a unifab serve, got {value!r}")
    rest = value.split("://", 1)[1]
    if not rest or rest.startswith(("/", ":")) or any(c.isspace() for c in value):
        raise UsageError(f"{where}: controller {value!r} has no host name")
    return value.rstrip("/")


def _positive_float(item: tuple[Any, str] | None, key: str, default: float) -> float:
    if item is None:
        return default
    value, where = item
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or value > 10**7:
        raise UsageError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return float(value)


def _positive_int(item: tuple[Any, str] | None, key: str, default: int = 1) -> int:
    if item is None:
        return default
    value, where = item
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where}: {key} must be a positive whole number, got {value!r}")
    return value


def _flag(item: tuple[Any, str] | None, key: str) -> bool:
    if item is None:
        return False
    value, where = item
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _path(item: tuple[Any, str] | None, key: str, default: Path) -> Path:
    if item is None:
        return default
    value, where = item
    if not isinstance(value, str | Path) or str(value) == "":
        raise UsageError(f"{where}: {key} must be a directory path, got {value!r}")
    return Path(value).expanduser()


def _hostname(item: tuple[Any, str] | None) -> str:
    """The host's name as the bundle and the snapshot ids carry it (the server's device-name rule)."""
    from unifab.serve.ingest import DEVICE_NAME

    value, where = item if item is not None else (socket.gethostname().split(".")[0], "this host's name")
    if not isinstance(value, str) or not DEVICE_NAME.fullmatch(value) or len(value) > 150:
        raise UsageError(f"{where}: hostname must be a plain host name (letters, digits, '-', '_', '.'), got {value!r}")
    return value
