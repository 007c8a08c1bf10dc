#!/usr/bin/env python3
"""Writes the openAPIV3Schema of each served version of a CustomResourceDefinition as JSON:
the test data `validate_manifests.py` checks our Gateway API and Envoy Gateway manifests with.

    python3 extract_crd_schemas.py CRD.yaml OUT_DIR

Each schema lands in OUT_DIR/<group>_<version>_<kind>.json. The CRD files come from their
upstream releases (named in crds/SOURCES.md); regenerate after a version bump.
"""
import json
import sys
from pathlib import Path

import yaml


def main(crd_path: str, out_dir: str) -> None:
    for crd in yaml.safe_load_all(Path(crd_path).read_text()):
        if not crd or crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            schema = version["schema"]["openAPIV3Schema"]
            name = f'{spec["group"]}_{version["name"]}_{spec["names"]["kind"]}.json'
            target = Path(out_dir) / name
            target.write_text(json.dumps(schema, sort_keys=True) + "\n")
            print(target)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
