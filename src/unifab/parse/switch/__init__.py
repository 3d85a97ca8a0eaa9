"""Switch-side formats (SONiC, Arista EOS, NVUE)."""

__all__ = []
