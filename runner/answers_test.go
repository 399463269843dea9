package runner

import (
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// TestCheckOffsets: log bounds are never negative; a time's offset is -1
// (no message at or after it) or not negative; OFFSET_INVALID is a
// partition the answer left out.
func TestCheckOffsets(t *testing.T) {
	tp := TP{Topic: "o", Partition: 1}
	for _, tc := range []struct {
		spec   kafka.OffsetSpec
		offset int64
		ok     bool
	}{
		{kafka.EarliestOffsetSpec, 0, true},
		{kafka.LatestOffsetSpec, 42, true},
		{kafka.EarliestOffsetSpec, -1, false},
		{kafka.LatestOffsetSpec, -1, false},
		{kafka.LatestOffsetSpec, int64(kafka.OffsetInvalid), false},
		{kafka.NewOffsetSpecForTimestamp(1772357400000), -1, true},
		{kafka.NewOffsetSpecForTimestamp(1772357400000), 7, true},
		{kafka.NewOffsetSpecForTimestamp(1772357400000), -2, false},
		{kafka.NewOffsetSpecForTimestamp(1772357400000), int64(kafka.OffsetInvalid), false},
	} {
		if err := checkOffsets([]tpOffset{{tp, 3}, {tp, tc.offset}}, tc.spec); (err == nil) != tc.ok {
			t.Errorf("spec %d, offset %d: %v, want ok=%v", tc.spec, tc.offset, err, tc.ok)
		}
	}
}

// TestCheckTopicsAnswered: every topic asked for is answered, and a
// topic's partitions are exactly 0 to its count minus 1.
func TestCheckTopicsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answered []string
		ids      []int32
		ok       bool
	}{
		{"whole", []string{"a", "b"}, []int32{0, 1, 2}, true},
		{"any order", []string{"a", "b"}, []int32{2, 0, 1}, true},
		{"a topic left out", []string{"a"}, []int32{0, 1, 2}, false},
		{"a partition repeated", []string{"a", "b"}, []int32{0, 1, 1}, false},
		{"a partition past the count", []string{"a", "b"}, []int32{0, 1, 3}, false},
		{"a negative partition", []string{"a", "b"}, []int32{0, -1, 2}, false},
	} {
		answered := map[string]bool{}
		for _, n := range tc.answered {
			answered[n] = true
		}
		err := checkTopicsAnswered([]string{"a", "b"}, answered, map[string]int32{"a": 3}, func(string) []int32 { return tc.ids })
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
