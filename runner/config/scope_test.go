package config

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseScopeValid(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		want    map[string][]int32
	}{
		{"nothing", nil, map[string][]int32{}},
		{"blank entries", []string{"", "  "}, map[string][]int32{}},
		{"bare topic", []string{"orders"}, map[string][]int32{"orders": nil}},
		{"padded", []string{"  orders  "}, map[string][]int32{"orders": nil}},
		{"list", []string{"orders:0,1,2"}, map[string][]int32{"orders": {0, 1, 2}}},
		{"unsorted list", []string{"orders:5,1,3"}, map[string][]int32{"orders": {1, 3, 5}}},
		{"duplicates in list", []string{"orders:2,2,1,2"}, map[string][]int32{"orders": {1, 2}}},
		{"leading zeros", []string{"orders:007"}, map[string][]int32{"orders": {7}}},
		{"range", []string{"orders:0-3"}, map[string][]int32{"orders": {0, 1, 2, 3}}},
		{"one-element range", []string{"orders:4-4"}, map[string][]int32{"orders": {4}}},
		{"range and list", []string{"orders:0-2,7,1"}, map[string][]int32{"orders": {0, 1, 2, 7}}},
		{"two topics", []string{"orders:1", "payments"}, map[string][]int32{"orders": {1}, "payments": nil}},
		{"merge lists", []string{"orders:3", "orders:1,3"}, map[string][]int32{"orders": {1, 3}}},
		{"bare wins after list", []string{"orders:1,2", "orders"}, map[string][]int32{"orders": nil}},
		{"bare wins before list", []string{"orders", "orders:1,2"}, map[string][]int32{"orders": nil}},
		{"max partition", []string{"t:2147483647"}, map[string][]int32{"t": {2147483647}}},
		{"legal chars", []string{"a.B_c-9"}, map[string][]int32{"a.B_c-9": nil}},
		{"249 chars", []string{strings.Repeat("x", 249)}, map[string][]int32{strings.Repeat("x", 249): nil}},
		{"dots are not . or ..", []string{"..."}, map[string][]int32{"...": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScope(tt.entries)
			if err != nil {
				t.Fatalf("ParseScope(%q): %v", tt.entries, err)
			}
			if !reflect.DeepEqual(got.Topics, tt.want) {
				t.Errorf("ParseScope(%q) = %v, want %v", tt.entries, got.Topics, tt.want)
			}
			if got.Empty() != (len(tt.want) == 0) {
				t.Errorf("Empty() = %v for %v", got.Empty(), got.Topics)
			}
		})
	}
}

func TestParseScopeLargestRange(t *testing.T) {
	last := MaxPartitionsPerEntry - 1
	s, err := ParseScope([]string{"t:0-" + strconv.Itoa(last)})
	if err != nil {
		t.Fatalf("a range of exactly %d partitions was rejected: %v", MaxPartitionsPerEntry, err)
	}
	if n := len(s.Topics["t"]); n != MaxPartitionsPerEntry {
		t.Errorf("got %d partitions, want %d", n, MaxPartitionsPerEntry)
	}
	if _, err := ParseScope([]string{"t:0-" + strconv.Itoa(last+1)}); err == nil {
		t.Errorf("a range of %d partitions was accepted", MaxPartitionsPerEntry+1)
	}
	// The bound counts the whole entry, not each item.
	if _, err := ParseScope([]string{"t:0-" + strconv.Itoa(last) + ",200000"}); err == nil {
		t.Errorf("an entry of %d partitions was accepted", MaxPartitionsPerEntry+1)
	}
}

func TestParseScopeInvalid(t *testing.T) {
	tests := []struct {
		entry string
		want  []string
	}{
		{":0", []string{"empty"}},
		{"orders:", []string{"empty", "topic alone"}},
		{"orders:-1", []string{`"-1"`, "≥ 0"}},
		{"orders:+1", []string{`"+1"`, "≥ 0"}},
		{"orders:1,-2", []string{`"-2"`, "≥ 0"}},
		{"orders:a", []string{`"a"`, "whole number"}},
		{"orders:1.5", []string{"whole number"}},
		{"orders:0x10", []string{"whole number"}},
		{"orders:1,,2", []string{"empty partition"}},
		{"orders:1,", []string{"empty partition"}},
		{"orders:3-1", []string{"backwards"}},
		{"orders:1-", []string{"empty partition"}},
		{"orders:1-2-3", []string{"whole number"}},
		{"orders:2147483648", []string{"whole number"}},
		{"orders:0-2147483647", []string{"more than"}},
		{"orders:0-99999999", []string{"more than"}},
		{"orders:1:2", []string{"whole number"}},
		{".", []string{"not allowed"}},
		{"..", []string{"not allowed"}},
		{"..:1", []string{"not allowed"}},
		{strings.Repeat("x", 250), []string{"250 characters", "249"}},
		{"orders/eu", []string{"may contain only"}},
		{"orders eu", []string{"may contain only"}},
		{"örders", []string{"may contain only"}},
		{"orders#1", []string{"may contain only"}},
		{"orders,payments", []string{"may contain only"}},
	}
	for _, tt := range tests {
		name := tt.entry
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, err := ParseScope([]string{"fine", tt.entry})
			if err == nil {
				t.Fatalf("ParseScope(%q) = %v, want an error", tt.entry, got.Topics)
			}
			// The error quotes the entry so the user can find it.
			if !strings.Contains(err.Error(), strconv.Quote(tt.entry)) {
				t.Errorf("error %q does not quote the entry %q", err, tt.entry)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !got.Empty() {
				t.Errorf("a failed parse returned a non-empty scope %v", got.Topics)
			}
		})
	}
}

func TestScopeContains(t *testing.T) {
	s, err := ParseScope([]string{"orders:1,3,5-7", "payments"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tp   TopicPartition
		want bool
	}{
		{TopicPartition{"orders", 1}, true},
		{TopicPartition{"orders", 3}, true},
		{TopicPartition{"orders", 6}, true},
		{TopicPartition{"orders", 7}, true},
		{TopicPartition{"orders", 0}, false},
		{TopicPartition{"orders", 2}, false},
		{TopicPartition{"orders", 8}, false},
		{TopicPartition{"payments", 0}, true},
		{TopicPartition{"payments", 999}, true},
		{TopicPartition{"refunds", 0}, false},
		{TopicPartition{"Orders", 1}, false},
	} {
		if got := s.Contains(tc.tp); got != tc.want {
			t.Errorf("Contains(%v) = %v, want %v", tc.tp, got, tc.want)
		}
	}
	var empty Scope
	if !empty.Contains(TopicPartition{"anything", 42}) {
		t.Error("the empty scope must contain every partition")
	}
}

func TestScopeStringRoundTrip(t *testing.T) {
	tests := []struct {
		entries []string
		want    string
	}{
		{nil, ""},
		{[]string{"orders"}, "orders"},
		{[]string{"payments", "orders:2,0-1"}, "orders:0,1,2 payments"},
		{[]string{"b:9", "a", "c:1,1"}, "a b:9 c:1"},
	}
	for _, tt := range tests {
		s, err := ParseScope(tt.entries)
		if err != nil {
			t.Fatal(err)
		}
		got := s.String()
		if got != tt.want {
			t.Errorf("String() of %q = %q, want %q", tt.entries, got, tt.want)
		}
		// Parse the rendering the way REPLAY_TOPICS is split.
		var l TopicList
		if err := l.Decode(got); err != nil {
			t.Fatal(err)
		}
		re, err := ParseScope(l)
		if err != nil {
			t.Fatalf("String() %q does not re-parse: %v", got, err)
		}
		if !reflect.DeepEqual(re.Topics, s.Topics) {
			t.Errorf("%q re-parsed to %v, want %v", got, re.Topics, s.Topics)
		}
	}
}

func TestScopeTopicNames(t *testing.T) {
	s, err := ParseScope([]string{"zeta", "alpha:1", "mid"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.TopicNames(), []string{"alpha", "mid", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Errorf("TopicNames() = %v, want %v", got, want)
	}
	if got := (TopicPartition{"orders", 3}).String(); got != "orders/3" {
		t.Errorf("TopicPartition.String() = %q", got)
	}
}

func TestValidateTopic(t *testing.T) {
	valid := []string{"a", "orders", "Orders.V2", "under_score", "dash-ed", "0", "...", ".hidden", strings.Repeat("t", MaxTopicLength)}
	for _, v := range valid {
		if err := ValidateTopic(v); err != nil {
			t.Errorf("ValidateTopic(%q) = %v, want nil", v, err)
		}
	}
	invalid := map[string]string{
		"":                                    "empty",
		".":                                   "not allowed",
		"..":                                  "not allowed",
		strings.Repeat("t", MaxTopicLength+1): "more than Kafka's 249",
		"a b":                                 "may contain only",
		"a/b":                                 "may contain only",
		"a:b":                                 "may contain only",
		"a\x00b":                              "may contain only",
		"tópico":                              "may contain only",
		"a\nb":                                "may contain only",
		"a+b":                                 "may contain only",
	}
	for in, want := range invalid {
		err := ValidateTopic(in)
		if err == nil {
			t.Errorf("ValidateTopic(%q) = nil, want an error", in)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateTopic(%q) = %q, want it to mention %q", in, err, want)
		}
	}
}

func TestValidateGroup(t *testing.T) {
	valid := []string{"g", "orders-consumer", "with space inside", "colon:ok", "ünïcode", strings.Repeat("g", 255)}
	for _, v := range valid {
		if err := ValidateGroup(v); err != nil {
			t.Errorf("ValidateGroup(%q) = %v, want nil", v, err)
		}
	}
	invalid := map[string]string{
		"":                       "empty",
		" lead":                  "spaces",
		"trail ":                 "spaces",
		"tab\t":                  "spaces",
		"in\x00side":             "control character",
		"bell\a":                 "control character",
		"del\x7f":                "control character",
		"new\nline":              "control character",
		strings.Repeat("g", 256): "256 bytes",
	}
	for in, want := range invalid {
		err := ValidateGroup(in)
		if err == nil {
			t.Errorf("ValidateGroup(%q) = nil, want an error", in)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateGroup(%q) = %q, want it to mention %q", in, err, want)
		}
	}
}
