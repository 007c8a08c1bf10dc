#!/usr/bin/env python3
"""Validates every Kubernetes manifest under a folder (default: deploy/kubernetes).

Built-in kinds are checked with kubernetes-validate (the Kubernetes OpenAPI schemas it ships,
strict: unknown fields are errors) for each Kubernetes version in KUBERNETES_VERSIONS. Gateway
API and Envoy Gateway kinds are checked against their CRDs' openAPIV3Schema, vendored in
crds/ (see crds/SOURCES.md), made strict the same way.

Before trusting a pass, it checks itself: each document with an unknown field added must fail.

    python3 tests/deploy/validate_manifests.py [FOLDER]

Exit status 0 when every document is valid; prints one line per document.
"""
import copy
import json
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

KUBERNETES_VERSIONS = ["1.32.0", "1.37.0"]
CRD_DIR = Path(__file__).resolve().parent / "crds"
CUSTOM_GROUPS = {"gateway.networking.k8s.io", "gateway.envoyproxy.io"}


def strict(schema):
    """The schema with unknown fields refused wherever it lists the known ones, as the API
    server's strict field validation does."""
    if isinstance(schema, dict):
        schema = {key: strict(value) for key, value in schema.items()}
        if (
            schema.get("type") == "object"
            and "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    return schema


def custom_schema(api_version, kind):
    group, _, version = api_version.partition("/")
    path = CRD_DIR / f"{group}_{version}_{kind}.json"
    if not path.exists():
        raise LookupError(f"no vendored schema for {api_version} {kind} ({path.name})")
    return strict(json.loads(path.read_text()))


def errors_of(document):
    """Why the document is invalid, or an empty list."""
    api_version = document.get("apiVersion", "")
    kind = document.get("kind", "")
    group = api_version.split("/")[0] if "/" in api_version else ""
    if group in CUSTOM_GROUPS:
        metadata = document.get("metadata", {})
        problems = []
        if not isinstance(metadata.get("name"), str) or not metadata["name"]:
            problems.append("metadata.name is missing")
        try:
            validator = jsonschema.Draft7Validator(custom_schema(api_version, kind))
        except LookupError as error:
            return [str(error)]
        problems += [
            f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
            for error in validator.iter_errors(document)
        ]
        return problems
    problems = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = "/".join(map(str, error.path)) or "(root)"
            problems.append(f"k8s {version}: {path}: {error.message}")
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
            problems.append(f"k8s {version}: {error}")
    return problems


def with_unknown_field(document):
    broken = copy.deepcopy(document)
    broken.setdefault("spec", {})["notAField"] = True
    return broken


def main(folder):
    files = sorted(Path(folder).rglob("*.yaml"))
    if not files:
        print(f"no manifests under {folder}")
        return 1
    failed = 0
    checked = 0
    for path in files:
        for index, document in enumerate(yaml.safe_load_all(path.read_text())):
            if not document:
                continue
            checked += 1
            name = f"{path}#{index} {document.get('kind')}/{document.get('metadata', {}).get('name')}"
            problems = errors_of(document)
            if problems:
                failed += 1
                print(f"INVALID {name}")
                for problem in problems:
                    print(f"    {problem}")
                continue
            if document.get("kind") not in ("ServiceAccount", "Secret", "ConfigMap") and not errors_of(
                with_unknown_field(document)
            ):
                failed += 1
                print(f"SELF-CHECK FAILED {name}: an unknown spec field was not refused")
                continue
            print(f"valid {name}")
    print(f"manifests: {checked - failed} valid, {failed} invalid")
    return 1 if failed else 0


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[2]
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else root / "deploy" / "kubernetes"))
