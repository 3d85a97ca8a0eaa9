"""The library surface a server, an agent or a notebook uses; ``unifab`` re-exports it.

Read a bundle (a directory, an archive, or files in memory) into a :class:`Snapshot`, run the checks on its
fabric (all, those on one job's path, one device's with ``only``), follow changes with a :class:`Session`,
diff the topology, render an intent for every device, and turn findings into the JSON document the CLI prints.

Example::

    import unifab
    snap = unifab.load_snapshot(Path("bundle"))
    findings = unifab.run_checks(snap.fabric, job="1001")
    doc = unifab.findings_document("bundle", findings)
"""

from __future__ import annotations

from unifab.checks.registry import CheckSpec, registry
from unifab.checks.runner import run_checks
from unifab.checks.topology import topology_diff
from unifab.collect.bundle import load_bundle, load_snapshot
from unifab.errors import BundleError, IntentError, ParseError, UnifabError, UsageError
from unifab.fabric_plan import FabricPlan, plan
from unifab.intent import Intent, load_intent, parse_intent
from unifab.model import Fabric, Finding, Fix, Severity
from unifab.platforms import PLATFORMS, Platform
from unifab.report.findings_json import FindingDoc, FindingsDocument, document
from unifab.session.incremental import Session, Update
from unifab.snapshot import DeviceOrigin, Snapshot
from unifab.sources import DirectorySource, MemorySource, Source, SourcePath, open_source

__all__ = [
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
]

check_catalog = registry
"""Check id -> :class:`CheckSpec` (title, why it hurts, how to fix it, the function), in run order."""

findings_document = document
"""``findings_document(bundle_label, findings)``: the JSON document of ``unifab check --format json``."""

render_intent = plan
"""``render_intent(intent, fabric, bundle_root)``: every device's configuration, diff and preview files."""
