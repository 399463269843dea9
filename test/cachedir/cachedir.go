// Package cachedir says where the build keeps what it fetches or builds
// outside the checkout (kube-apiserver, etcd, helm, controller-gen, Argo's
// binaries, the images' base root, Apache Kafka's jars), so that tests run
// outside make find what make built.
//
// The root is $KAFKA_REPLAY_CACHE_DIR, which the Makefile exports from its
// CACHE_DIR, else ~/.cache/kafka-replay. Everything below it is keyed by
// version, so clean checkouts on one machine (CI) share it, and a run with
// an empty root is a run on a machine that never built anything.
package cachedir

import (
	"os"
	"path/filepath"
)

// Env names the cache root for scripts and tests; the Makefile sets it.
const Env = "KAFKA_REPLAY_CACHE_DIR"

// Root is the cache root.
func Root() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "kafka-replay")
}

// Path is elem joined under the cache root.
func Path(elem ...string) string {
	return filepath.Join(append([]string{Root()}, elem...)...)
}

// StrimziVersion is the Strimzi whose CRDs the tests install; the Makefile's
// STRIMZI_VERSION and test/tools/strimzi/pom.xml say the same
// (test/build: TestStrimziVersionAgrees).
const StrimziVersion = "1.2.0"

// StrimziCRDsEnv names the directory of Strimzi's generated CRDs; the
// Makefile sets it for the targets that build them (make strimzi-crds).
const StrimziCRDsEnv = "KAFKA_REPLAY_STRIMZI_CRDS"

// StrimziCRDs is the directory of Strimzi's CRDs that
// test/tools/strimzi/build.sh generates: 040-Crd-kafka.yaml,
// 041-Crd-kafkaconnect.yaml, 044-Crd-kafkauser.yaml and
// 047-Crd-kafkaconnector.yaml.
func StrimziCRDs() string {
	if d := os.Getenv(StrimziCRDsEnv); d != "" {
		return d
	}
	return Path("strimzi-"+StrimziVersion, "crds")
}
