#!/usr/bin/env bash
# Builds Argo Workflows' workflow-controller, argoexec (the executor:
# init, wait and emissary) and the argo CLI from the Go module proxy into a
# cache directory keyed by version, and prints that directory. Existing
# binaries are not rebuilt, so only the first run on a machine pays (9 min
# cold beside other work on 2 cores, 7 CPU-minutes, for the three: they
# share most of their dependencies and build as one command).
#
#   test/tools/argo/build.sh      prints e.g. ~/.cache/kafka-replay/tools/argo-v4.0.5
#
# github.com/argoproj/argo-workflows/v4 has no replace directives: it builds
# with its own go.mod and go.sum, not this project's. workflow-controller
# builds as served. argoexec does not: the module on the proxy lacks
# workflow/executor/osspecific/signal_linux.go, so Term, CanIgnoreSignal,
# Kill, Setpgid and Wait are undefined on Linux. Our own Linux implementation
# of them, osspecific/signal_linux.go beside this script (tested there by `go
# test ./test/tools/argo/...`), is added to Argo's package at build time with
# `go build -overlay`; no file of the module is changed.
#
# The go command refuses an overlay for any path beneath GOMODCACHE, so the
# build does not run in the module cache: `go mod download` fetches the
# module and checks it against the checksum database, and the build runs in
# a scratch copy of that directory (deleted afterwards) as the main module.
# Everything it compiles is the served module plus the added file (and the
# empty page below); its dependencies come from its own go.sum. argoexec is rebuilt when the overlay
# file changes (its sha256 is kept beside the binary).
#
# The argo CLI embeds the UI of `argo server` (ui/embed.go: //go:embed
# dist/app), which the module does not ship: it is built by yarn from
# ui/src. The overlay adds an empty ui/dist/app/index.html, as Argo's own
# Makefile does for a CLI built without the UI (STATIC_FILES=false). `argo
# server` then serves an empty page; the commands the docs use (submit,
# get, resume, stop) talk to the Kubernetes API with the kubeconfig when
# ARGO_SERVER is unset, and never touch it.
#
# Both are static (CGO_ENABLED=0): argoexec copies itself into every
# workflow pod and runs there inside the step's own image, which may be
# scratch (the runner's is).
set -euo pipefail

ARGO_VERSION=${ARGO_VERSION:-v4.0.5}
module=github.com/argoproj/argo-workflows/v4
here=$(cd "$(dirname "$0")" && pwd)
tools=${TOOLS:-${KAFKA_REPLAY_CACHE_DIR:-${HOME}/.cache/kafka-replay}/tools}
out="$tools/argo-${ARGO_VERSION}"
overlay_src="$here/osspecific/signal_linux.go"
overlay_sum=$(sha256sum "$overlay_src" | cut -d' ' -f1)

missing() {
  need=()
  [ -x "$out/workflow-controller" ] || need+=(workflow-controller)
  [ -x "$out/argo" ] || need+=(argo)
  if [ ! -x "$out/argoexec" ] || [ "$(cat "$out/argoexec.overlay-sha256" 2>/dev/null)" != "$overlay_sum" ]; then
    need+=(argoexec)
  fi
  [ ${#need[@]} -gt 0 ]
}
if ! missing; then
  echo "$out"
  exit 0
fi
mkdir -p "$out"
# One builder at a time per version: a second caller waits, then finds the
# binaries there.
exec 9>"$out/.lock"
flock 9
if ! missing; then
  echo "$out"
  exit 0
fi

start=$(date +%s)
work=$(mktemp -d "$tools/.argo-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Outside this project's module, so its go.mod plays no part.
cd "$work"
export CGO_ENABLED=0

dir=$(go mod download -json "$module@$ARGO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir/workflow/executor/osspecific" ]; then
  echo "argo/build.sh: $module@$ARGO_VERSION has no workflow/executor/osspecific" >&2
  exit 1
fi
if [ -e "$dir/workflow/executor/osspecific/signal_linux.go" ]; then
  # A version that ships the file needs no overlay; say so rather than
  # build two definitions of the same functions.
  echo "argo/build.sh: $module@$ARGO_VERSION already has signal_linux.go; drop the overlay" >&2
  exit 1
fi
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
if [ -e "$dir/ui/dist/app" ]; then
  echo "argo/build.sh: $module@$ARGO_VERSION ships ui/dist/app; drop the empty index.html" >&2
  exit 1
fi
: >"$work/index.html"
printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' \
  "$work/src/workflow/executor/osspecific/signal_linux.go" "$overlay_src" \
  "$work/src/ui/dist/app/index.html" "$work/index.html" >"$work/overlay.json"

# The version the binaries report, as Argo's own Makefile sets it; the
# controller also derives its default executor image tag from it.
ldflags="-s -w -X github.com/argoproj/argo-workflows/v4.version=${ARGO_VERSION} -X github.com/argoproj/argo-workflows/v4.gitTag=${ARGO_VERSION} -X github.com/argoproj/argo-workflows/v4.gitTreeState=clean"
pkgs=()
for b in "${need[@]}"; do pkgs+=("./cmd/$b"); done
echo "building ${need[*]} (Argo Workflows ${ARGO_VERSION}) into $out, cached afterwards..." >&2
mkdir -p "$work/bin"
(cd "$work/src" && GOFLAGS=-mod=readonly go build -trimpath -overlay "$work/overlay.json" -ldflags "$ldflags" -o "$work/bin/" "${pkgs[@]}")
for b in "${need[@]}"; do
  mv "$work/bin/$b" "$out/$b"
  if [ "$b" = argoexec ]; then
    echo "$overlay_sum" >"$out/argoexec.overlay-sha256"
  fi
done
echo "built ${need[*]} in $(( $(date +%s) - start ))s" >&2
echo "$out"
