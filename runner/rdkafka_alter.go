//go:build linux

package runner

/*
// Only confluent-kafka-go calls rd_kafka_AlterConsumerGroupOffsets_new from
// another object file; see rdkafka_alter.c.
#cgo LDFLAGS: -Wl,--wrap=rd_kafka_AlterConsumerGroupOffsets_new
void kr_alter_free_inputs(int on);
*/
import "C"

// leakyConfluent is the confluent-kafka-go version whose
// AlterConsumerGroupOffsets leaks its C list (rdkafka_alter.c), the one
// go.mod requires. TestDependenciesReviewed fails when go.mod moves to
// another, until someone checks whether that one still leaks: if it frees
// the list itself, this must go, or the list is freed twice.
const leakyConfluent = "v2.11.1"

func init() { C.kr_alter_free_inputs(1) }
