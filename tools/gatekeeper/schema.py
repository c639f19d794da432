#!/usr/bin/env python3
"""Judges many objects with ../shared/tools/k8s-strict-check.py in one process.

    python3 tools/gatekeeper/schema.py STRICT_CHECK_SCRIPT K8S_VERSION < objects.jsonl

Reads one JSON object per line and prints one line per object: "ok", or the first problem the
strict check reports (schemas and the API server's own rules), so that a caller keeps only what a
Kubernetes API server of that version would let reach admission.
"""
import importlib.util
import json
import sys


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
            issues = check.validate_object(json.loads(line), schemas, True, check.REDACTION_MARKER)
        except Exception as e:  # a crash of the checker on a strange object: not admissible
            issues = [("error", "", f"checker failed: {e}")]
        errors = [f"{p or '.'}: {m}" for level, p, m in issues if level == "error"]
        out.write(("ok" if not errors else errors[0].replace("\n", " ")) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
