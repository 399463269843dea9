#!/usr/bin/env bash
# Builds helm from the Go module proxy (helm.sh/helm/v3 has no replace
# directives, so `go install pkg@version` works) into a cache directory keyed by
# version, and prints the binary's path. An existing binary is not rebuilt.
#
#   test/tools/helm/build.sh            prints e.g. ~/.cache/kafka-replay/tools/helm-v3.22.0
#
# The ldflags are the ones helm's own Makefile sets: without them `helm
# version` says v3.x-unreleased, and `helm template` / `helm lint` assume
# Kubernetes 1.20 for .Capabilities.KubeVersion and the deprecation checks.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
# helm v3.22.0 is built against k8s.io/client-go v0.37 → Kubernetes 1.37.
KUBE_MINOR=${HELM_KUBE_MINOR:-37}
tools=${TOOLS:-${KAFKA_REPLAY_CACHE_DIR:-${HOME}/.cache/kafka-replay}/tools}
out="$tools/helm-${HELM_VERSION}"

if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$tools"
exec 9>"$tools/.helm.lock"
flock 9
if [ ! -x "$out" ]; then
  start=$(date +%s)
  echo "building helm ${HELM_VERSION} into $out (cached afterwards)..." >&2
  gobin=$(mktemp -d "$tools/.gobin-helm.XXXXXX")
  trap 'rm -rf "$gobin"' EXIT
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION} -X helm.sh/helm/v3/internal/version.metadata= -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags="$ldflags -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=${KUBE_MINOR}"
  done
  # Outside any module, so the project's go.mod plays no part.
  (cd "$gobin" && GOBIN="$gobin" GOFLAGS=-mod=mod CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}")
  mv "$gobin/helm" "$out"
  echo "built helm in $(( $(date +%s) - start ))s" >&2
fi
echo "$out"
