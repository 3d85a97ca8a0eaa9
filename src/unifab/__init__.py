"""unifab: one model of a GPU cluster's NICs, links and switches, checked end to end.

The public API lives in :mod:`unifab.api` and is re-exported here, imported on first use so that the
command line starts fast: ``import unifab; unifab.load_snapshot(path)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from unifab.api import *  # noqa: F403

# The names of unifab.api.__all__ (a test keeps the two lists equal).
_API = (
    "PLATFORMS",
    "BundleError",
    "CheckSpec",
    "DeviceOrigin",
    "DirectorySource",
    "Fabric",
    "FabricPlan",
    "Finding",
    "FindingDoc",
    "FindingsDocument",
    "Fix",
    "Intent",
    "IntentError",
    "MemorySource",
    "ParseError",
    "Platform",
    "Session",
    "Severity",
    "Snapshot",
    "Source",
    "SourcePath",
    "UnifabError",
    "Update",
    "UsageError",
    "check_catalog",
    "findings_document",
    "load_bundle",
    "load_intent",
    "load_snapshot",
    "open_source",
    "parse_intent",
    "render_intent",
    "run_checks",
    "topology_diff",
)

__all__ = ["__version__", *_API]  # noqa: PLE0604


def __getattr__(name: str) -> Any:
    if name in _API:
        from unifab import api

        return getattr(api, name)
    raise AttributeError(f"module 'unifab' has no attribute {name!r}")
