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
# The collection must be visible to AWX's job user (uid 1000, HOME=/runner) and to an arbitrary
# uid in group 0 (OpenShift), every optional feature's Python package must import, and kubectl
# (k8s_objects_kubeconfig) must run.
for user in 1000 123456:0; do
    "$ENGINE" run --rm --user "$user" "ainet-fabric-ee:$VERSION" \
        ansible-doc -t module ainet.fabric.rail_interfaces >/dev/null
    "$ENGINE" run --rm --user "$user" "ainet-fabric-ee:$VERSION" \
        python3 -c 'import pyavd, nvueschema.models, libyang, openapi_schema_validator'
    "$ENGINE" run --rm --user "$user" "ainet-fabric-ee:$VERSION" kubectl version --client
done
echo "ainet-fabric-ee:$VERSION"
