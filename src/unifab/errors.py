"""The exception tree of unifab.

    UnifabError                       root; every error unifab raises on purpose
    ├── ParseError                    raw artifact does not match its format (names source, line, expectation)
    ├── BundleError                   a bundle path is missing or is not a bundle
    ├── UsageError                    a command was called with arguments that cannot work
    │   ├── IntentError               fabric.yaml has problems (all of them, each with file:line: key.path)
    │   └── UnknownPlatformError      a device names a switch OS no platform declares (unifab.platforms)
    ├── RenderError                   a value cannot be written into a device's configuration language
    ├── SonicRedisError               a SONiC switch's Redis cannot be read (collect.sonic_redis)
    ├── SourceOfTruthError            NetBox / Nautobot cannot be read (collect.netbox)
    └── EapiError                     Arista eAPI (collect.eos_eapi)
        ├── EapiUnreachable           no answer: connection refused, timeout, TLS
        ├── EapiAuthError             401 / 403
        ├── EapiCommandError          a command was rejected by the switch
        └── EapiResponseError         the answer is not the JSON-RPC it should be

Bad input inside a bundle never escapes as an exception from a fabric-wide run: the collector turns
a ``ParseError`` into an ``INPUT-UNREADABLE`` finding and carries on.
"""

from __future__ import annotations

__all__ = ["BundleError", "IntentError", "ParseError", "RenderError", "UnifabError", "UsageError"]


class UnifabError(Exception):
    """Root of every error unifab raises on purpose."""


class ParseError(UnifabError):
    """A raw artifact could not be read as its format.

    ``source`` is the file (or a label such as ``<stdin>``), ``line`` the 1-based line where reading
    failed (``None`` when the format has no lines worth naming, e.g. a JSON key path), and
    ``expected`` says what the parser wanted to see there.
    """

    def __init__(self, source: str, expected: str, line: int | None = None, key: str | None = None) -> None:
        self.source = source
        self.expected = expected
        self.line = line
        self.key = key
        where = source
        if line is not None:
            where += f":{line}"
        if key is not None:
            where += f" [{key}]"
        super().__init__(f"{where}: {expected}")


class BundleError(UnifabError):
    """The bundle directory does not exist or has none of the bundle's layout."""


class UsageError(UnifabError):
    """Arguments that cannot work together, or a value out of range."""


class RenderError(UnifabError):
    """A value cannot be written into a device's configuration: a port or profile name outside the
    OS's allowed pattern (it would otherwise be pasted into commands unchecked), or a profile the
    device cannot express. ``device_os`` names the target (``sonic``, ``eos``, ``nvue``)."""

    def __init__(self, device_os: str, message: str) -> None:
        self.device_os = device_os
        super().__init__(f"{device_os}: {message}")


class IntentError(UsageError):
    """An intent file (``fabric.yaml``) that cannot be used; ``problems`` holds one message per problem,
    each naming the file, line, key path, the value and what is allowed."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(problems))
