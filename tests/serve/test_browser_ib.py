"""Both silos in one view: ``unifab serve`` over a mixed twin (RoCE backend + InfiniBand network), driven by Chromium.

The overview's InfiniBand section counts the IB switches and the hosts with an HCA and the IB findings; the
devices list says which fabric each device is on and filters to the InfiniBand ones; an IB switch has its
device page; the rail map draws the IB silo as its own grid beside the RoCE one. The API's devices list carries
the same ``fabric`` per device, checked against the library.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.serve.conftest import serving
from tests.serve.test_browser import launch, logged_in, need_chromium

IB_SCENARIOS = ("ib-second-master", "ib-mtu", "ib-missing-cable", "ib-port-errors")


class Served:
    def __init__(self, url: str, token: str, bundle: Path) -> None:
        self.url, self.token, self.bundle = url, token, bundle

    def get(self, path: str, **params: object) -> dict:  # type: ignore[type-arg]
        r = httpx.get(f"{self.url}{path}", params=params, headers={"Authorization": f"Bearer {self.token}"})  # type: ignore[arg-type]
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from unifab.twin.generate import generate

    work = tmp_path_factory.mktemp("served-mixed")
    bundle = work / "bundle"
    generate(bundle, gpus=64, seed=5, scenarios=(*IB_SCENARIOS, "mtu-mismatch"), fabric="mixed")
    with serving(work, bundle) as (url, token, _db):
        yield Served(url, token, bundle)


def library_fabrics(bundle: Path) -> dict[str, str]:
    """Each device's fabric as the library models it (entity id -> roce | ib | roce+ib)."""
    import unifab

    fabric = unifab.load_snapshot(bundle).fabric
    out = {f"switch:{n}": s.fabric for n, s in fabric.switches.items()}
    for name, host in fabric.hosts.items():
        kinds = {nic.fabric for nic in host.nics.values()}
        out[f"host:{name}"] = "+".join(k for k in ("roce", "ib") if k in kinds)
    return out


def test_the_api_says_which_fabric_each_device_is_on(mixed: Served) -> None:
    expected = library_fabrics(mixed.bundle)
    assert "ib" in expected.values() and "roce+ib" in expected.values()
    items, cursor = [], None
    while True:
        page = mixed.get("/api/v1/devices", limit=50, **({"cursor": cursor} if cursor else {}))
        items += page["items"]
        if not (cursor := page["next_cursor"]):
            break
    assert {d["name"]: d["fabric"] for d in items} == expected
    ib = mixed.get("/api/v1/devices", fabric="ib", limit=500)["items"]
    assert {d["name"] for d in ib} == {n for n, f in expected.items() if "ib" in f.split("+")}
    assert all(d["os"] == "ib" for d in ib if d["kind"] == "switch")
    summary = mixed.get("/api/v1/summary")
    ib_switches = sum(1 for n, f in expected.items() if f == "ib" and n.startswith("switch:"))
    assert summary["fabrics"]["ib"]["switch"] == ib_switches
    assert summary["fabrics"]["ib"]["host"] == sum(
        1 for n, f in expected.items() if "ib" in f and n.startswith("host:")
    )
    ib_checks = sum(sum(v.values()) for c, v in summary["by_check"].items() if c.startswith("IB-"))
    assert ib_checks > 0 and sum(summary["ib_findings"].values()) >= ib_checks


def test_a_person_sees_both_silos(mixed: Served, shots: Path) -> None:
    need_chromium()
    from playwright.sync_api import sync_playwright

    summary = mixed.get("/api/v1/summary")
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = logged_in(page, mixed.url, mixed.token)

            assert page.locator("#infiniband").inner_text() == "InfiniBand"
            assert page.locator("#ib-switches").inner_text() == str(summary["fabrics"]["ib"]["switch"])
            assert page.locator("#ib-hosts").inner_text() == str(summary["fabrics"]["ib"]["host"])
            total = sum(summary["ib_findings"].values())
            assert page.locator("#ib-findings-total").inner_text().startswith(f"{total} open findings")
            # the IB checks sit in the same findings table as the RoCE ones
            by_check = page.locator("#by-check tbody tr td:first-child").all_inner_texts()
            assert any(c.startswith("IB-") for c in by_check) and any(c.startswith("QOS-") for c in by_check)
            page.screenshot(path=str(shots / "overview-mixed.png"), full_page=True)

            page.click("text=Devices")
            page.wait_for_url(f"{mixed.url}/devices")
            kinds = set(page.locator("tr.device").evaluate_all("rs => rs.map(r => r.dataset.fabric)"))
            assert {"roce", "ib", "roce+ib"} <= kinds
            page.click("#fabric-ib")
            page.wait_for_url("**/devices?fabric=ib")
            rows = page.locator("tr.device")
            assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.fabric)")) == {"ib", "roce+ib"}
            switch_row = page.locator('tr.device[data-fabric="ib"]').first
            assert switch_row.locator("td.fabric").inner_text() == "InfiniBand"
            page.screenshot(path=str(shots / "devices-ib.png"), full_page=True)
            name = switch_row.locator("a").inner_text()
            switch_row.locator("a").click()
            page.wait_for_url("**/devices/switch*")
            assert page.locator("h1").inner_text() == name
            assert page.locator("#device-fabric").inner_text() == "InfiniBand"
            assert page.locator("#ports tbody tr").count() >= 1
            assert "4X" in page.locator("#ports tbody tr").first.inner_text()  # its IB width, not a RoCE speed
            page.screenshot(path=str(shots / "ib-switch.png"), full_page=True)

            page.goto(f"{mixed.url}/devices/host:gpu001")  # a host on both: its RoCE NICs and its HCA
            assert page.locator("#device-fabric").inner_text() == "RoCE + InfiniBand"
            assert page.locator('tr.nic[data-fabric="ib"]').count() >= 1
            assert page.locator('tr.nic[data-fabric="roce"]').count() >= 1
            assert "lid " in page.locator('tr.nic[data-fabric="ib"]').first.inner_text()

            jobs = mixed.get("/api/v1/jobs")["items"]
            # the twin's jobs run NCCL over the RoCE rails (NCCL_IB_HCA names them), not the IB storage HCA
            assert jobs and all(j["fabrics"] == ["roce"] for j in jobs)
            page.goto(f"{mixed.url}/jobs")
            assert page.locator("tr.job td.fabric").all_inner_texts() == ["RoCE"] * len(jobs)
            if jobs:  # a job page opens its findings in the findings table (the job filter)
                page.goto(f"{mixed.url}/jobs/{jobs[0]['id']}")
                page.click("#job-findings-table")
                page.wait_for_url("**/findings?job=*")
                expected = len(mixed.get("/api/v1/findings", job=jobs[0]["id"], state="all", limit=500)["items"])
                assert page.locator("tr.finding").count() == min(expected, 50)

            # the rail map: the RoCE grid in #railmap, the IB silo's own grid (leaves, spines) in #railmap-ib
            rails = {sec["fabric"]: sec for sec in mixed.get("/api/v1/topology/railmap")["sections"]}
            assert list(rails) == ["roce", "ib"]
            page.click("text=Rail map")
            page.wait_for_url(f"{mixed.url}/railmap")
            for table, kind in (("#railmap", "roce"), ("#railmap-ib", "ib")):
                leaves = page.locator(f"{table} a.leaf")
                assert leaves.count() == rails[kind]["summary"]["leaves"] >= 1
                assert set(leaves.evaluate_all("ls => ls.map(l => l.dataset.fabric)")) == {kind}
            assert page.locator("#label-ib").inner_text() == "InfiniBand"
            assert page.locator("#spines-ib tbody tr").count() == rails["ib"]["summary"]["spines"]
            page.screenshot(path=str(shots / "railmap-mixed.png"), full_page=True)
            ib_leaf = page.locator("#railmap-ib a.leaf").first
            name = ib_leaf.get_attribute("data-leaf")
            ib_leaf.click()
            page.wait_for_url(f"**/leaves/{name}")
            assert page.locator("h1").inner_text() == name

            page.goto(f"{mixed.url}/findings?check=IB-SM")
            assert page.locator("tr.finding").count() >= 1
            assert set(page.locator("tr.finding").evaluate_all("rs => rs.map(r => r.dataset.check)")) == {"IB-SM"}
            assert [e for e in errors if "status of 401" not in e] == []
        finally:
            browser.close()
    assert (shots / "overview-mixed.png").stat().st_size > 10_000
