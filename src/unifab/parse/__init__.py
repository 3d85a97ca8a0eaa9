"""Parsers: pure functions from the bytes a device prints to typed records.

Each format lives in its own module and exposes ``parse(text, source) -> Record``. The registry in
:mod:`unifab.parse.registry` names them for ``unifab parse FORMAT FILE``.
"""

__all__ = []
