#!/bin/bash
# Slurm HealthCheckProgram: judge this node with `unifab agent gate` and drain it, with the reason, when it is
# not ready. slurmd runs this as root every HealthCheckInterval seconds (slurm.conf.snippet); it must finish
# well within Slurm's health check time limit, so the gate's own deadline bounds the collection.
#
# Exit status: the gate's (0 ready, 1 not ready and drained, 2 could not judge: not drained, logged).
# A node that was drained by this script is not resumed by it: `scontrol update NodeName=<node> State=RESUME`
# after the fix (or a site script that resumes nodes whose reason starts with "unifab:").
set -u

UNIFAB=${UNIFAB:-/usr/local/bin/unifab}
DEADLINE=${UNIFAB_GATE_DEADLINE:-10}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
args=(agent gate --format slurm --drain --deadline "$DEADLINE" --hostname "$NODE")
if [ -r /etc/unifab/fabric.yaml ]; then
    args+=(--intent /etc/unifab/fabric.yaml)
fi

reason=$("$UNIFAB" "${args[@]}")
status=$?
if [ "$status" -ne 0 ]; then
    logger -t unifab-healthcheck -- "node $NODE: exit $status: $reason"
fi
exit "$status"
