//go:build linux

package runner

// The search wrapper's state (rdkafka_find.c), for the external tests.
var (
	FindCounts         = findCounts
	FindHintOn         = &findHintOn
	FindIndexOn        = &findIndexOn
	ReviewedLibrdkafka = reviewedLibrdkafka
)
