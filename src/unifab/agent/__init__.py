"""The host agent, installed on every GPU server.

Modules: :mod:`~unifab.agent.run` (``unifab agent run``: periodic collect, push of what changed to ``unifab
serve``, heartbeat; :mod:`~unifab.agent.spool` keeps what could not be sent, bounded, in order, across
restarts; :mod:`~unifab.agent.config` its settings file; :mod:`~unifab.agent.backoff` the retry delays),
:mod:`~unifab.agent.apply` and :mod:`~unifab.agent.plan_exec` (``unifab agent apply``: the rendered NIC plan,
recorded, applied, verified, rolled back), :mod:`~unifab.agent.gate` and :mod:`~unifab.agent.job_env`
(``unifab agent gate``: is this node ready for a job). docs/agent.md.
"""

from __future__ import annotations

__all__ = ()
