"""Where bytes come from: bundle directories today; live hosts and switches as they land."""

__all__ = []
