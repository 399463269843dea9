//go:build !linux

package runner

// Elsewhere (macOS's linker has no --wrap) librdkafka's own search runs;
// see rdkafka_find.go.
const findHintOn, findIndexOn = false, false
