"""The skips a twin's scenarios declare (``twin.scenarios.NEEDS``), for the truth tests to expect."""

from __future__ import annotations

from typing import Any

from unifab.twin.cluster import build
from unifab.twin.nic_variants import apply_nic_variants
from unifab.twin.scenario_needs import Kinds
from unifab.twin.scenarios import NEEDS, SCENARIOS


def expected_skips(
    gpus: int, switch_os: str = "sonic", vendor: str = "mlx5", driver: str = "ofed"
) -> list[dict[str, Any]]:
    """The skips the scenarios' declared needs (:data:`NEEDS`) predict for this twin, in catalog order, as
    truth.json records them. A scenario skipped for any other reason is not among them."""
    cluster = build(gpus, switch_os=switch_os)
    apply_nic_variants(cluster, vendor, driver)
    kinds = Kinds.of(cluster)
    return [{"scenario": n, "why": NEEDS[n].why} for n in SCENARIOS if n in NEEDS and not NEEDS[n].met(kinds)]
