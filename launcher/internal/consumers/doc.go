// Package consumers decides the pause and restore of the consumers a
// request names (spec.consumers, and a KafkaSource's own pods): what may
// fight a pause (PauseWarnings), whether a recorded consumer goes back
// (DecideRestore: only what the pause left as it was), and what status says
// of them (PausedMessage, RestoredCondition); and KEDA's pause annotations.
// It is pure: the launcher reads and writes the workloads, their scale and
// ScaledObjects.
package consumers
