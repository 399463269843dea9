#!/usr/bin/env bash
# Builds real Kubernetes and etcd binaries from the Go module proxy into a
# cache directory keyed by version, and prints that directory. A binary that is
# already there is not rebuilt, so only the first run on a machine pays
# (kube-apiserver takes ~7 minutes cold on 2 cores).
#
#   test/tools/build.sh [binary ...]     default: etcd kube-apiserver (envtest)
#
# Binaries: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kubectl, kube-proxy. Progress goes to stderr; stdout is only the
# directory, so callers can write KUBEBUILDER_ASSETS=$(test/tools/build.sh).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}   # must match test/tools/kube/go.mod
here=$(cd "$(dirname "$0")" && pwd)
out=${KUBE_ASSETS_DIR:-${KAFKA_REPLAY_CACHE_DIR:-${HOME}/.cache/kafka-replay}/kube-${KUBE_VERSION}}
mkdir -p "$out"

bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(etcd kube-apiserver)

minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
# Without these the servers report v0.0.0-master+$Format:%H$.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"

# One builder at a time per cache directory: a second caller waits, then finds
# the binaries there.
exec 9>"$out/.lock"
flock 9

for b in "${bins[@]}"; do
  if [ -x "$out/$b" ]; then
    continue
  fi
  start=$(date +%s)
  echo "building $b (the kube-${KUBE_VERSION} set) into $out, cached afterwards..." >&2
  case "$b" in
    etcd)
      (cd "$here/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$out/.$b.tmp" go.etcd.io/etcd/server/v3) ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kubectl|kube-proxy)
      (cd "$here/kube" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/.$b.tmp" "k8s.io/kubernetes/cmd/$b") ;;
    *)
      echo "build.sh: unknown binary $b" >&2; exit 2 ;;
  esac
  mv "$out/.$b.tmp" "$out/$b"
  echo "built $b in $(( $(date +%s) - start ))s" >&2
done

echo "$out"
