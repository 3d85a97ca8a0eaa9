"""NVIDIA's Xid catalog as data: what an Xid means and what the vendor says to do about it.

Source: NVIDIA "Analyzing Xid Errors with the Xid Catalog" (docs.nvidia.com/deploy/xid-errors), columns Code,
Mnemonic, Description and the Resolution Bucket (immediate / investigatory action). ``incident`` says whether one
occurrence is a hardware or driver fault unifab reports (HEALTH-GPU-XID): the application faults (13, 31, 43, 45:
the vendor's action is to restart the application) and the informational ones (63: a row remapped as designed,
154: a note about another Xid) are not; an unknown Xid is reported with the catalog's advice to look it up.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "CATALOG", "XidInfo", "lookup"]


@dataclass(frozen=True, slots=True)
class XidInfo:
    xid: int
    mnemonic: str
    meaning: str
    immediate: str  # the catalog's immediate resolution bucket
    investigatory: str
    incident: bool  # one occurrence is a fault unifab reports


# The resolution buckets in the words an operator acts on.
ACTIONS = {
    "RESTART_APP": "restart the application on this GPU",
    "RESET_GPU": "drain the node, then reset the GPU (nvidia-smi --gpu-reset) once no process uses it",
    "RESTART_BM": "drain the node and reboot it (the GPU is not reachable until the node restarts)",
    "RESTART_FM": "restart the NVIDIA Fabric Manager",
    "CONTACT_SUPPORT": "open a hardware case with the GPU's serial number if it recurs",
    "IGNORE": "no action",
    "INVESTIGATE_SW": "collect nvidia-bug-report.sh: a driver or firmware issue",
    "INVESTIGATE_LINK_SI": "check the NVLink signal integrity (reseat, then replace the baseboard)",
    "WORKFLOW_XID_48": "drain the node, reset the GPU; repeated DBEs or a failed row remap: replace the GPU",
    "WORKFLOW_NVLINK_ERR": "drain the node, reset the GPUs of the NVLink domain; recurring: hardware case",
    "WORKFLOW_NVLINK5_ERR": "drain the node, reset the GPUs of the NVLink domain; recurring: hardware case",
}

_ROWS: tuple[tuple[int, str, str, str, str, bool], ...] = (
    (13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP", "RESTART_APP", False),
    (31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP", "RESTART_APP", False),
    (43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE", "CONTACT_SUPPORT", False),
    (45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", "IGNORE", "IGNORE", False),
    (48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48", "WORKFLOW_XID_48", True),
    (63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE", "IGNORE", False),
    (64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU", "CONTACT_SUPPORT", True),
    (74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", True),
    (
        79,
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
        "GPU has fallen off the bus",
        "RESTART_BM",
        "CONTACT_SUPPORT",
        True,
    ),
    (92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE", "CONTACT_SUPPORT", True),
    (94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP", "IGNORE", True),
    (95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU", "IGNORE", True),
    (109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU", "CONTACT_SUPPORT", True),
    (119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", "INVESTIGATE_SW", True),
    (120, "GSP_ERROR", "GSP Error", "RESET_GPU", "INVESTIGATE_SW", True),
    (136, "ALI_TRAINING_FAIL", "Link Training Failed", "RESET_GPU", "INVESTIGATE_LINK_SI", True),
    (140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "RESET_GPU", "CONTACT_SUPPORT", True),
    (143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU", "CONTACT_SUPPORT", True),
    *(
        (x, f"NVLINK_{unit}_ERROR", "NVLink5 unit error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", True)
        for x, unit in zip(range(144, 151), ("SAW", "RLW", "TLW", "TREX", "NVLPW_CTRL", "NETIR", "MSE"), strict=True)
    ),
    (154, "GPU_RECOVERY_ACTION_CHANGED", "Recovery action changed (about another Xid)", "IGNORE", "IGNORE", False),
    (155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "RESET_GPU", "INVESTIGATE_SW", True),
)
CATALOG: dict[int, XidInfo] = {r[0]: XidInfo(*r) for r in _ROWS}


def lookup(xid: int) -> XidInfo:
    """The catalog entry; an Xid the catalog does not list is reported, with the advice to look it up."""
    return CATALOG.get(xid) or XidInfo(xid, "UNKNOWN", "not in unifab's copy of the Xid catalog", "", "", True)
