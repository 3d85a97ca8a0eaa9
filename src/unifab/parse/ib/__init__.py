"""InfiniBand fabric formats: ``ibnetdiscover`` (topology file, ``-p``, ``-l``), ``iblinkinfo``, ``perfquery``,
``ibqueryerrors``, ``sminfo``, ``ibstat``/``ibstatus`` and the ``ibswitches``/``ibhosts`` node lists."""

__all__ = []
