"""Host-side formats (NIC, GPU, PCIe, LLDP)."""

__all__ = []
