package config

import (
	"strings"
	"testing"
)

// TestValidRunID pins the run ID rule that validRunID checks without a
// counted repetition: 1 to MaxRunIDLength characters of letters, digits and
// ._:/-, nothing else anywhere in it.
func TestValidRunID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"", false},
		{"a", true},
		{"ns/name/0123abcd:attempt-1.2_x", true},
		{strings.Repeat("r", MaxRunIDLength), true},
		{strings.Repeat("r", MaxRunIDLength+1), false},
		{"has space", false},
		{"trailing\n", false},
		{"\nleading", false},
		{"ünïcode", false},
		{strings.Repeat("é", MaxRunIDLength/2), false},
		{"semi;colon", false},
	} {
		if got := validRunID(tc.id); got != tc.want {
			t.Errorf("validRunID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
