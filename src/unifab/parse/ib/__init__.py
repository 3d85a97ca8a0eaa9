"""InfiniBand fabric formats (``ibnetdiscover`` topology file)."""
