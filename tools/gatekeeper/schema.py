#!/usr/bin/env python3
"""Judges many objects with ../shared/tools/k8s-strict-check.py in one process.

    python3 tools/gatekeeper/schema.py STRICT_CHECK_SCRIPT K8S_VERSION < objects.jsonl

Reads one JSON object per line and prints one line per object: "ok", or the first problem the
strict check reports (schemas and the API server's own rules), so that a caller keeps only what a
Kubernetes API server of that version would let reach admission.

The strict check applies the API server's pod rules to the pod templates of workloads; the API
server applies the same rules to a Pod (ValidatePodCreate and ValidatePodTemplateSpec both run
ValidatePodSpec, k8s.io/kubernetes pkg/apis/core/validation), so they are applied here to Pods too,
with the rules of ephemeral containers (image required, a name no other container of the pod
has: validateEphemeralContainers); and a pod template needs a spec with containers, also when
its spec is null. Validating admission runs after that validation, so a Pod
that fails it never reaches Gatekeeper. Also from the API server, not in the strict check: on
create, a HorizontalPodAutoscaler's scaleTargetRef.apiVersion must name an API group, except for
a ReplicationController (pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go,
validationOptionsForHorizontalPodAutoscaler).
"""
import importlib.util
import json
import sys

def decoded(value):
    """The value as the API server decodes it: null fields are absent."""
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def pod_rules(check, obj):
    spec = decoded(obj.get("spec"))
    if not isinstance(spec, dict):
        spec = {}
    out = []
    rules = check.ApiRules(out)
    try:
        rules.pod_spec(spec, ".spec")
    except (AttributeError, TypeError, KeyError, ValueError):
        pass
    names = {c.get("name") for key in ("containers", "initContainers") for c in (spec.get(key) or []) if isinstance(c, dict)}
    for i, c in enumerate(spec.get("ephemeralContainers") or []):
        if not isinstance(c, dict):
            continue
        path = f".spec.ephemeralContainers[{i}]"
        if not c.get("image"):
            out.append(("error", path + ".image", "[api] Required value"))
        n = c.get("name")
        if isinstance(n, str):
            if len(n) > 63 or not check.DNS1123_LABEL.match(n):
                out.append(("error", path + ".name", f"[api] {json.dumps(n)}: must be a DNS-1123 label"))
            if n in names:
                out.append(("error", path + ".name", f"[api] duplicate container name {json.dumps(n)}"))
            names.add(n)
    return out


def template_rules(check, obj):
    """A workload's pod template without a spec (or with a null one) has no containers: the
    strict check validates only a template spec that is an object."""
    path = check.POD_TEMPLATE_PATHS.get(obj.get("kind"))
    template = check.get(decoded(obj), *path) if path else None
    if isinstance(template, dict) and not isinstance(template.get("spec"), dict):
        return [("error", "." + ".".join(path) + ".spec.containers", "[api] Required value (at least one container)")]
    return []


def hpa_rules(obj):
    ref = decoded((obj.get("spec") or {}).get("scaleTargetRef")) if isinstance(obj.get("spec"), dict) else None
    if not isinstance(ref, dict):
        return []
    api_version = ref.get("apiVersion") if isinstance(ref.get("apiVersion"), str) else ""
    # schema.ParseGroupVersion: "" and "/" are empty, no "/" is a version of the core group,
    # one "/" splits group and version, more is an error.
    slashes = api_version.count("/")
    if slashes > 1:
        return [("error", ".spec.scaleTargetRef.apiVersion", f"[api] {json.dumps(api_version)}: unexpected GroupVersion string")]
    group = api_version.split("/")[0] if slashes == 1 else ""
    if group == "" and ref.get("kind") != "ReplicationController":
        return [("error", ".spec.scaleTargetRef.apiVersion", f"[api] {json.dumps(api_version)}: apiVersion must specify API group")]
    return []


def main():
    script, version = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("k8s_strict_check", script)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    schemas = check.Schemas(check.DEFAULT_SCHEMAS, version, "deployed", "1.27")
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            issues = check.validate_object(obj, schemas, True, check.REDACTION_MARKER)
            if isinstance(obj, dict):
                issues += template_rules(check, obj)
            if isinstance(obj, dict) and obj.get("apiVersion") == "v1" and obj.get("kind") == "Pod":
                issues += pod_rules(check, obj)
            if isinstance(obj, dict) and str(obj.get("apiVersion", "")).startswith("autoscaling/") and obj.get("kind") == "HorizontalPodAutoscaler":
                issues += hpa_rules(obj)
        except Exception as e:  # a crash of the checker on a strange object: not admissible
            issues = [("error", "", f"checker failed: {e}")]
        errors = [f"{p or '.'}: {m}" for level, p, m in issues if level == "error"]
        out.write(("ok" if not errors else errors[0].replace("\n", " ")) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
