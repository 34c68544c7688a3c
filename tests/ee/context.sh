#!/usr/bin/env bash
# The execution environment's build context, without building the image:
#   tests/ee/context.sh [context-dir]     (default: build/ee/context)
# Builds the collection tarball of the version in galaxy.yml, puts it where
# execution-environment.yml takes it from, and runs `ansible-builder create`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CONTEXT=${1:-$ROOT/build/ee/context}
VERSION=$(sed -n 's/^version: *//p' "$ROOT/galaxy.yml")
mkdir -p "$ROOT/build/dist"
ansible-galaxy collection build --force --output-path "$ROOT/build/dist" "$ROOT" >/dev/null
rm -rf "$ROOT/build/ee/collection"
mkdir -p "$ROOT/build/ee/collection"
cp "$ROOT/build/dist/ainet-fabric-$VERSION.tar.gz" "$ROOT/build/ee/collection/"
# ansible-builder resolves additional_build_files against the definition's directory.
cd "$ROOT"
ansible-builder create --file execution-environment.yml --context "$CONTEXT" --output-filename Containerfile >/dev/null
echo "$CONTEXT (ainet.fabric $VERSION)"
