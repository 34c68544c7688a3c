#!/usr/bin/env bash
# Build the execution environment image ainet-fabric-ee:<version> with podman (or docker).
# Needs the base image registry (quay.io) or a local copy of the base image; the
# collection itself comes from this checkout, never from Galaxy.
#   tests/ee/build.sh [podman|docker]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ENGINE=${1:-podman}
VERSION=$(sed -n 's/^version: *//p' "$ROOT/galaxy.yml")
CONTEXT=$ROOT/build/ee/context
bash "$ROOT/tests/ee/context.sh" "$CONTEXT"
"$ENGINE" build -f "$CONTEXT/Containerfile" -t "ainet-fabric-ee:$VERSION" "$CONTEXT"
# The collection must be visible to AWX's job user (uid 1000, HOME=/runner).
"$ENGINE" run --rm --user 1000 -e HOME=/runner "ainet-fabric-ee:$VERSION" \
    ansible-doc -t module ainet.fabric.rail_interfaces >/dev/null
echo "ainet-fabric-ee:$VERSION"
