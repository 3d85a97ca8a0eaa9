"""Kubernetes pods grouped into jobs: ``kubectl get pods -o json`` (a ``PodList``/``List``, or one ``Pod``).

``-o yaml`` is read too. Pods become :class:`~unifab.parse.sched.slurm_jobs.Job` records with id
``k8s:<namespace>/<name>``; the name comes from the first of these pod labels that is set:

1. ``training.kubeflow.org/job-name``  Kubeflow Training Operator (PyTorchJob, MPIJob, TFJob ...)
2. ``jobset.sigs.k8s.io/jobset-name``  JobSet (Kubeflow Trainer v2 TrainJob runs on it)
3. ``volcano.sh/job-name``             Volcano Job
4. ``batch.kubernetes.io/job-name``    batch/v1 Job (Kubernetes 1.27+)
5. ``job-name``                        batch/v1 Job (older label)

then the pod's controller ``ownerReference`` name, then the pod's own name.

- ``nodes``: the distinct ``spec.nodeName`` of the pods, in pod order (pending pods have none).
- ``gpus_per_node``: ``nvidia.com/gpu`` (or ``amd.com/gpu``) limits (else requests) of the pods on each node,
  summed, when every node has the same; ``gres`` and ``gpu_indices`` stay empty (the API does not say which
  GPUs: that is the kubelet PodResources API).
- ``env``: ``value`` of the containers' ``env`` (``$(VAR)`` of an earlier entry expanded as the kubelet does),
  taken from the containers that ask for GPUs (all containers when none does). A ``valueFrom`` entry and an
  ``envFrom`` source are not resolved: they are listed in ``env_unresolved`` (``POD_IP``,
  ``envFrom:configMap/nccl-env``). A variable whose value differs between those containers (or that some lack)
  is listed in ``env_conflicts`` and ``env`` holds its first value; RANK-style variables differ by design.
- ``state``: FAILED if a pod failed, else PENDING if one is pending, else RUNNING if one runs, else COMPLETED
  when all succeeded, else UNKNOWN; ``reason`` is the first non-running pod's reason (``Unschedulable``).
- ``start_time``: the earliest ``status.startTime``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from unifab.errors import ParseError, ParseProblems, YamlError, load_yaml
from unifab.parse._json import child, json_list, json_object, type_name
from unifab.parse._text import pasted
from unifab.parse.sched._common import load_json, opt_str, read_in_part
from unifab.parse.sched.nccl_env import nccl_settings
from unifab.parse.sched.slurm_jobs import Job

__all__ = ["GPU_RESOURCES", "GROUP_LABELS", "parse"]

GROUP_LABELS = (
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "volcano.sh/job-name",
    "batch.kubernetes.io/job-name",
    "job-name",
)
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
_PHASE_ORDER = (("Failed", "FAILED"), ("Pending", "PENDING"), ("Running", "RUNNING"))
_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)")
_COUNT = re.compile(r"^[0-9]{1,6}$")


@dataclass(slots=True)
class _Pod:
    name: str
    node: str | None
    phase: str
    reason: str | None
    start: str | None
    gpus: int
    containers: list[dict[str, str | None]]  # per rank container: name -> value (None: unresolved)
    env_from: list[str]


@dataclass(slots=True)
class _Group:
    namespace: str
    name: str
    pods: list[_Pod] = field(default_factory=list)


def _load(text: str, source: str) -> object:
    if text.lstrip()[:1] in "{[":
        return load_json(text, source)
    try:
        return load_yaml(text, source)
    except YamlError as exc:
        raise ParseError(source, f"expected JSON or YAML: {exc.problem}", line=exc.line or 1) from None


def _str_map(value: object, path: str, source: str) -> dict[str, str]:
    if value is None:
        return {}
    out = json_object(value, path, source)
    for k, v in out.items():
        if not isinstance(v, str):
            raise ParseError(source, f"expected a string, got {type_name(v)}", key=child(path, k))
    return {k: v for k, v in out.items() if isinstance(v, str)}


def _time(o: dict[str, object], key: str, path: str, source: str) -> str | None:
    value = o.get(key)
    if isinstance(value, dt.datetime):  # unquoted YAML timestamp
        value = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if value.tzinfo else value.isoformat()
    if value is not None and not isinstance(value, str):
        raise ParseError(source, f"expected a time string, got {type_name(value)}", key=child(path, key))
    return value


def _gpu_count(container: dict[str, object], path: str, source: str) -> int:
    resources = json_object(container.get("resources") or {}, child(path, "resources"), source)
    for section in ("limits", "requests"):
        where = child(child(path, "resources"), section)
        amounts = json_object(resources.get(section) or {}, where, source)
        total = 0
        found = False
        for name in GPU_RESOURCES:
            if name in amounts:
                value = amounts[name]
                text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
                if not isinstance(text, str) or not _COUNT.match(text):
                    raise ParseError(source, f"expected a whole GPU count, got {value!r}", key=child(where, name))
                total += int(text)
                found = True
        if found:
            return total
    return 0


def _container_env(container: dict[str, object], path: str, source: str, env_from: list[str]) -> dict[str, str | None]:
    env: dict[str, str | None] = {}
    known: dict[str, str] = {}
    for i, raw in enumerate(json_list(container.get("env") or [], child(path, "env"), source)):
        where = child(child(path, "env"), i)
        entry = json_object(raw, where, source)
        name = opt_str(entry, "name", where, source)
        if not name:
            raise ParseError(source, "expected the variable's 'name'", key=child(where, "name"))
        if "valueFrom" in entry:
            json_object(entry["valueFrom"], child(where, "valueFrom"), source)
            env[name] = None
            known.pop(name, None)
            continue
        value = opt_str(entry, "value", where, source) or ""

        def sub(m: re.Match[str], known: dict[str, str] = known) -> str:
            if m[0] == "$$":
                return "$"
            return known.get(m[1], m[0])

        value = _REF.sub(sub, value)
        env[name] = value
        known[name] = value
    for i, raw in enumerate(json_list(container.get("envFrom") or [], child(path, "envFrom"), source)):
        where = child(child(path, "envFrom"), i)
        entry = json_object(raw, where, source)
        for key, kind in (("configMapRef", "configMap"), ("secretRef", "secret")):
            if key in entry:
                ref = json_object(entry[key], child(where, key), source)
                ref_name = opt_str(ref, "name", child(where, key), source) or "?"
                prefix = opt_str(entry, "prefix", where, source) or ""
                label = f"envFrom:{kind}/{ref_name}" + (f" (prefix {prefix})" if prefix else "")
                if label not in env_from:
                    env_from.append(label)
    return env


def _pod(item: dict[str, object], path: str, source: str) -> tuple[str, str, _Pod]:
    meta = json_object(item.get("metadata"), child(path, "metadata"), source)
    name = opt_str(meta, "name", child(path, "metadata"), source)
    if not name:
        raise ParseError(source, "expected the pod's metadata.name", key=child(child(path, "metadata"), "name"))
    namespace = opt_str(meta, "namespace", child(path, "metadata"), source) or "default"
    labels = _str_map(meta.get("labels"), child(child(path, "metadata"), "labels"), source)
    group = next((labels[label] for label in GROUP_LABELS if labels.get(label)), None)
    if group is None:
        refs = json_list(meta.get("ownerReferences") or [], child(child(path, "metadata"), "ownerReferences"), source)
        for i, raw in enumerate(refs):
            where = child(child(child(path, "metadata"), "ownerReferences"), i)
            ref = json_object(raw, where, source)
            if ref.get("controller") is True:
                group = opt_str(ref, "name", where, source)
                break
    spec_path = child(path, "spec")
    spec = json_object(item.get("spec") or {}, spec_path, source)
    containers = [
        json_object(c, child(child(spec_path, "containers"), i), source)
        for i, c in enumerate(json_list(spec.get("containers") or [], child(spec_path, "containers"), source))
    ]
    counts = [_gpu_count(c, child(child(spec_path, "containers"), i), source) for i, c in enumerate(containers)]
    ranks = [i for i, n in enumerate(counts) if n > 0] or list(range(len(containers)))
    env_from: list[str] = []
    envs = [_container_env(containers[i], child(child(spec_path, "containers"), i), source, env_from) for i in ranks]
    status_path = child(path, "status")
    status = json_object(item.get("status") or {}, status_path, source)
    phase = opt_str(status, "phase", status_path, source) or "Unknown"
    reason = opt_str(status, "reason", status_path, source)
    for i, raw in enumerate(json_list(status.get("conditions") or [], child(status_path, "conditions"), source)):
        where = child(child(status_path, "conditions"), i)
        cond = json_object(raw, where, source)
        if reason is None and cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            reason = opt_str(cond, "reason", where, source)
    pod = _Pod(
        name=name,
        node=opt_str(spec, "nodeName", spec_path, source) or None,
        phase=phase,
        reason=reason,
        start=_time(status, "startTime", status_path, source),
        gpus=sum(counts),
        containers=envs,
        env_from=env_from,
    )
    return namespace, group or name, pod


def _merge_env(pods: list[_Pod]) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    ranks = [c for p in pods for c in p.containers]
    names: list[str] = []
    for c in ranks:
        names += [n for n in c if n not in names]
    env: dict[str, str] = {}
    unresolved: list[str] = []
    conflicts: list[str] = []
    for name in names:
        values = [c.get(name, "\0missing") for c in ranks]
        literal = [v for v in values if v is not None and v != "\0missing"]
        if literal:
            env[name] = literal[0]
        if any(v is None for v in values):
            unresolved.append(name)
        if len(set(values)) > 1:
            conflicts.append(name)
    for p in pods:
        unresolved += [s for s in p.env_from if s not in unresolved]
    return env, tuple(unresolved), tuple(conflicts)


def _job(g: _Group) -> Job:
    nodes: list[str] = []
    per_node: dict[str, int] = {}
    for p in g.pods:
        if p.node is not None:
            if p.node not in nodes:
                nodes.append(p.node)
            per_node[p.node] = per_node.get(p.node, 0) + p.gpus
    distinct = set(per_node.values())
    phases = {p.phase for p in g.pods}
    state = next((s for phase, s in _PHASE_ORDER if phase in phases), None)
    if state is None:
        state = "COMPLETED" if phases == {"Succeeded"} else "UNKNOWN"
    reason = next((p.reason for p in g.pods if p.phase != "Running" and p.reason), None)
    starts = sorted(p.start for p in g.pods if p.start)
    env, unresolved, conflicts = _merge_env(g.pods)
    return Job(
        id=f"k8s:{g.namespace}/{g.name}",
        name=g.name,
        user=None,
        state=state,
        state_flags=(),
        reason=reason,
        partition=None,
        nodes=tuple(nodes),
        node_count=len(nodes),
        gres=None,
        gpus_per_node=distinct.pop() if len(distinct) == 1 and 0 not in distinct else None,
        gpu_indices={},
        start_time=starts[0] if starts else None,
        env=env,
        env_unresolved=unresolved,
        env_conflicts=conflicts,
        nccl=nccl_settings(env),
    )


def _identity(item: object) -> tuple[str, str, str | None]:
    """The namespace, pod name and group (job name) of a pod as far as they read, without raising: so a pod that
    cannot be read still names the job it costs."""
    meta = item.get("metadata") if isinstance(item, dict) else None
    meta = meta if isinstance(meta, dict) else {}

    def text(o: object, key: str) -> str | None:
        value = o.get(key) if isinstance(o, dict) else None
        return value if isinstance(value, str) and value else None

    name = text(meta, "name") or ""
    labels = meta.get("labels")
    group = next((g for label in GROUP_LABELS if (g := text(labels, label))), None)
    refs = meta.get("ownerReferences")
    if group is None and isinstance(refs, list):
        group = next((text(r, "name") for r in refs if isinstance(r, dict) and r.get("controller") is True), None)
    return text(meta, "namespace") or "default", name, group or name or None


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Job, ...]:
    """Jobs from ``kubectl get pods -o json|yaml`` (pods grouped by job label, see the module docstring).

    With ``problems`` a pod that cannot be read costs its job (all its pods: a job read from some of them would
    look smaller than it is), named by the job and the pod's key path; when the pod does not say its job, only
    the pod is left out. The other jobs read as in an unharmed file. Output whose every pod is bad is refused.
    """
    return read_in_part(_parse, text, source, problems)


def _parse(text: str, source: str, log: ParseProblems) -> tuple[Job, ...]:
    if not text.strip():
        raise ParseError(source, "expected kubectl get pods output, got empty text", line=1)
    top = json_object(_load(text, source), "", source)
    kind = top.get("kind")
    items: list[Any]
    if kind == "Pod":
        items, base = [top], ""
    elif "items" in top:
        items, base = json_list(top["items"], "items", source), "items"
    else:
        raise ParseError(source, "expected a PodList ('items') or a Pod (kind: Pod)", key="items")
    groups: dict[tuple[str, str], _Group] = {}
    spoiled: set[tuple[str, str]] = set()  # jobs a pod that cannot be read belongs to
    for i, raw in enumerate(items):
        path = child(base, i) if base else ""
        namespace, pod_name, group = _identity(raw)
        at = f"the pod at {path or 'the top'}"
        what = f"job {namespace}/{group} ({f'pod {pod_name}' if pod_name else at})" if group else at
        with log.skipping(what) as read:
            item = json_object(raw, path, source)
            item_kind = item.get("kind")
            if item_kind not in (None, "Pod"):
                raise ParseError(source, f"expected kind Pod, got {item_kind!r}", key=child(path, "kind"))
            key_namespace, key_name, pod = _pod(item, path, source)
            groups.setdefault((key_namespace, key_name), _Group(key_namespace, key_name)).pods.append(pod)
        if read.failed and group:
            spoiled.add((namespace, group))
    return tuple(_job(g) for key, g in groups.items() if key not in spoiled)
