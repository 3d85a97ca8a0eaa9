"""Switch-side formats (SONiC, Arista EOS, NVUE)."""
