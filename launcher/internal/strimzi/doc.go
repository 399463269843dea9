// Package strimzi resolves a ReplayRequest's spec.kafka.clusterRef: a
// Strimzi Kafka, one of its listeners and a KafkaUser, as the API server
// returns them, into the bootstrap servers, the librdkafka properties and
// the Secret keys the runner is given (v1alpha1.ResolvedKafka). It is pure:
// the launcher reads the objects and calls Resolve once, at acceptance.
//
// The objects are unstructured, with the few field names this package reads
// written out here, each citing Strimzi's api module
// (io.strimzi.api.kafka.model): importing Strimzi's API would mean its Java
// classes (there is no Go module of them), and a generated Go copy of its
// CRDs would be thousands of lines for a dozen fields, pinned to one
// Strimzi release while the fields read here are the same in v1beta2
// (Strimzi 0.22 to 0.51) and v1 (read here: Strimzi 0.49 and later).
//
// The launcher never reads a Secret: the credentials are mounted into the
// runner under the property names it reads, with the listener's servers as
// their binding (runner/config/credentials.go), so that they go to those
// servers only.
package strimzi
