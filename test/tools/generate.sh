#!/usr/bin/env bash
# Runs controller-gen over the launcher: deepcopy code, the ReplayRequest CRD
# (into the Helm chart's crds/) and the launcher's RBAC role (from its
# +kubebuilder:rbac markers). `make generate` calls it on the checkout; the
# launcher's staleness test calls it with a temporary OUT and compares.
#
#   test/tools/generate.sh CONTROLLER_GEN [OUT]     OUT defaults to the repository root
set -euo pipefail

cg=${1:?usage: generate.sh CONTROLLER_GEN [OUT]}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$root}
cd "$root"

"$cg" \
  object:headerFile=/dev/null paths=./launcher/api/... output:object:dir="$out/launcher/api/v1alpha1" \
  crd paths=./launcher/api/... output:crd:dir="$out/charts/kafka-replay/crds"
"$cg" \
  rbac:roleName=kafka-replay-launcher paths=./launcher/... output:rbac:dir="$out/charts/kafka-replay/files/rbac"
