"""Host-side formats (NIC, GPU, PCIe, LLDP)."""
