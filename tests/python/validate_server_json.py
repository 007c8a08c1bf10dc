"""Validates a server.json against the MCP Registry's published schema (2025-12-11).

Usage: validate_server_json.py SCHEMA SERVER_JSON

SCHEMA is the registry's `server.schema.json`, byte for byte as published (scripts/test takes
it from PyPI's `skillsaw` wheel, which bundles the released schemas with their source and
license; nothing is downloaded from the registry's site). Its SHA-256 is checked first, so a
different file is refused rather than trusted. Prints each error with its JSON path and exits
1 when there is one; exits 0 and prints "valid" otherwise.
"""

import hashlib
import json
import sys

import jsonschema

# https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def main() -> int:
    schema_path, document_path = sys.argv[1], sys.argv[2]
    raw = open(schema_path, "rb").read()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SCHEMA_SHA256:
        print(f"{schema_path} is not the published 2025-12-11 schema (sha256 {digest})")
        return 2
    schema = json.loads(raw)
    document = json.load(open(document_path, encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.path))
    for error in errors:
        path = "/".join(str(part) for part in error.path) or "(top)"
        print(f"{path}: {error.message}")
    if errors:
        return 1
    print("valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
