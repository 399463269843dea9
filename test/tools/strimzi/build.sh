#!/usr/bin/env bash
# Writes Strimzi's CRDs for the tests (envtest and the end-to-end suite)
# into a cache directory keyed by version, and prints that directory.
#
#   STRIMZI_VERSION=1.2.0 test/tools/strimzi/build.sh   prints e.g. ~/.cache/kafka-replay/strimzi-1.2.0/crds
#
# Strimzi writes the CRDs it releases (packaging/install/cluster-operator/
# 04x-Crd-*.yaml) by running its CRD generator over its API model, with
# the arguments of its api module's pom. Both are on Maven Central
# (io.strimzi:crd-generator, published from 1.0 on, and io.strimzi:api), so
# this does the same: Maven copies them with their dependencies (pom.xml
# beside this script), then CrdGenerator runs with those arguments, read
# from the pom inside io.strimzi:api's own jar. The result is checked
# against crds.sha256: a generator or a model that wrote anything else
# fails the build. Strimzi's CRDs are not themselves on any registry this
# project may use (the jars carry no YAML; Strimzi's release files and
# Helm chart are on GitHub and quay.io).
#
# The generator is compiled for Java 21: STRIMZI_JAVA, else the newest
# Java 21 or later under /usr/lib/jvm, else java on PATH if it is one.
set -euo pipefail

STRIMZI_VERSION=${STRIMZI_VERSION:-1.2.0}
root=${KAFKA_REPLAY_CACHE_DIR:-${HOME}/.cache/kafka-replay}
dir=${STRIMZI_DIR:-$root/strimzi-${STRIMZI_VERSION}}
out="$dir/crds"
here=$(cd "$(dirname "$0")" && pwd)
sums="$here/crds-${STRIMZI_VERSION}.sha256"

if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
[ -f "$sums" ] || { echo "no pinned sums $sums for Strimzi ${STRIMZI_VERSION}" >&2; exit 1; }

major() { "$1" -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p'; }
java=${STRIMZI_JAVA:-}
if [ -z "$java" ]; then
  for j in /usr/lib/jvm/*/bin/java $(command -v java || true); do
    m=$(major "$j" 2>/dev/null || true)
    if [ -n "$m" ] && [ "$m" -ge 21 ] && { [ -z "$java" ] || [ "$m" -gt "$(major "$java")" ]; }; then
      java=$j
    fi
  done
fi
[ -n "$java" ] || { echo "Strimzi's CRD generator needs Java 21 or later: none under /usr/lib/jvm or on PATH (set STRIMZI_JAVA)" >&2; exit 1; }

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -f "$out/.complete" ]; then
  start=$(date +%s)
  echo "generating Strimzi ${STRIMZI_VERSION}'s CRDs into $out (cached afterwards)..." >&2
  rm -rf "$dir/libs" "$out.tmp"
  ${MVN:-mvn} -q -B -Dstyle.color=never -f "$here/pom.xml" -Dstrimzi.version="${STRIMZI_VERSION}" \
    -Dmaven.repo.local="$root/m2" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/libs"
  # The generator's arguments, as io.strimzi:api's pom gives them to
  # exec-maven-plugin (execution generate-crd-co-install-v1): the labels,
  # the API versions, and one class=file pair per CRD, of which the tests
  # keep the four the launcher reads.
  pom=$(unzip -p "$dir/libs/api-${STRIMZI_VERSION}.jar" META-INF/maven/io.strimzi/api/pom.xml)
  mapfile -t args < <(printf '%s\n' "$pom" |
    sed -n '/<id>generate-crd-co-install-v1<\/id>/,/<\/execution>/p' |
    grep -o '<argument>[^<]*</argument>' | sed -E 's|</?argument>||g' |
    sed -n '/^io\.strimzi\.crdgenerator\.CrdGenerator$/,$p' | tail -n +2)
  keep=(040-Crd-kafka.yaml 041-Crd-kafkaconnect.yaml 044-Crd-kafkauser.yaml 047-Crd-kafkaconnector.yaml)
  gen=()
  for a in "${args[@]}"; do
    case "$a" in
      io.strimzi.*=*)
        f=${a##*[/\}]}
        for k in "${keep[@]}"; do [ "$f" = "$k" ] && gen+=("${a%%=*}=$out.tmp/$f"); done
        ;;
      *) gen+=("$a") ;;
    esac
  done
  mkdir -p "$out.tmp"
  "$java" -cp "$dir/libs/*" io.strimzi.crdgenerator.CrdGenerator "${gen[@]}" >&2
  (cd "$out.tmp" && sha256sum --quiet -c "$sums") || {
    echo "Strimzi ${STRIMZI_VERSION}'s generated CRDs differ from $sums" >&2
    exit 1
  }
  touch "$out.tmp/.complete"
  rm -rf "$out" && mv "$out.tmp" "$out"
  echo "generated Strimzi's CRDs in $(( $(date +%s) - start ))s" >&2
fi
echo "$out"
