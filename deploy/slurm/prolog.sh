#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/unifab-gate.sh): judge this node right before the job
# starts. Slurm drains a node whose prolog exits non-zero and requeues the job, so this exits non-zero only for a
# node problem; "could not judge" (exit 2, e.g. the deadline was hit) lets the job start and is logged.
#
# The job's NCCL settings are the job's, not the node's: judge them in the batch script instead, before srun:
#   env | grep '^NCCL_' > "$TMPDIR/nccl.env"
#   unifab agent gate --job-env "$TMPDIR/nccl.env" --format slurm || exit 1
set -u

UNIFAB=${UNIFAB:-/usr/local/bin/unifab}
NODE=${SLURMD_NODENAME:-$(hostname -s)}

reason=$("$UNIFAB" agent gate --format slurm --deadline "${UNIFAB_GATE_DEADLINE:-10}" --hostname "$NODE")
status=$?
case "$status" in
    0) exit 0 ;;
    1) echo "$reason" >&2; logger -t unifab-prolog -- "job ${SLURM_JOB_ID:-?} on $NODE: $reason"; exit 1 ;;
    *) logger -t unifab-prolog -- "job ${SLURM_JOB_ID:-?} on $NODE: not judged (exit $status): $reason"; exit 0 ;;
esac
