"""Scheduler inputs: which nodes a job runs on, and the NCCL settings its ranks use.

Slurm (``squeue``, ``scontrol show job|node``, ``sinfo``, slurmrestd JSON), Kubernetes pod lists, Slurm
hostlist notation, and the NCCL environment variables that choose the RoCE traffic class and HCAs.
"""

__all__ = []
