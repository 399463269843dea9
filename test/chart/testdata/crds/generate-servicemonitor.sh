#!/usr/bin/env bash
# Regenerates monitoring.coreos.com_servicemonitors.yaml beside this script
# from prometheus-operator's Go API types (served by the Go module proxy) with
# controller-gen, in a throwaway module.
#
#   test/chart/testdata/crds/generate-servicemonitor.sh CONTROLLER_GEN
set -euo pipefail
cg=${1:?usage: generate-servicemonitor.sh CONTROLLER_GEN}
version=${PROM_OPERATOR_VERSION:-v0.95.2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module servicemonitorcrd

go 1.26.0
MOD
cat > tools.go <<'GO'
package servicemonitorcrd

import _ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
GO
go get "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@${version}" >/dev/null
go mod tidy >/dev/null
"$cg" crd:crdVersions=v1,allowDangerousTypes=true \
  paths=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1 output:crd:dir=out
out="$here/monitoring.coreos.com_servicemonitors.yaml"
{
  sed -n '1,/^# test\/chart\/testdata\/crds\/generate-servicemonitor.sh/p' "$out"
  cat out/monitoring.coreos.com_servicemonitors.yaml
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
