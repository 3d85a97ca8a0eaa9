"""InfiniBand fabric formats (``ibnetdiscover`` topology file)."""

__all__ = []
