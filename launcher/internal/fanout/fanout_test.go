package fanout

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestChildName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		parent, group string
	}{
		{"incident-42", "billing"},
		{"incident-42", "Billing"},
		{"incident-42", "billing "},
		{long, "billing"},
		{strings.Repeat("a", 51) + "-x", "g"}, // cut right after a dash
	}
	seen := map[string]string{}
	for _, tt := range tests {
		n := ChildName(tt.parent, tt.group)
		if len(n) > maxNameLength || !dnsLabel.MatchString(n) {
			t.Errorf("ChildName(%q, %q) = %q: not a DNS label of at most %d", tt.parent, tt.group, n, maxNameLength)
		}
		if n != ChildName(tt.parent, tt.group) {
			t.Errorf("ChildName(%q, %q) is not stable", tt.parent, tt.group)
		}
		if len(tt.parent) < 50 && !strings.HasPrefix(n, tt.parent+"-") {
			t.Errorf("ChildName(%q, %q) = %q does not start with the parent's name", tt.parent, tt.group, n)
		}
		key := tt.parent + "/" + tt.group
		for k, other := range seen {
			if other == n && strings.SplitN(k, "/", 2)[0] == tt.parent {
				t.Errorf("%s and %s share the child %s", k, key, n)
			}
		}
		seen[key] = n
	}
}

func TestPlanDigest(t *testing.T) {
	ab := []ChildPlan{{"a", "p1"}, {"b", "p2"}}
	d, ok, err := PlanDigest(ab)
	if err != nil || !ok || !strings.HasPrefix(d, "sha256:") {
		t.Fatalf("PlanDigest = %q %v %v", d, ok, err)
	}
	tests := []struct {
		name     string
		children []ChildPlan
		same     bool // the same digest as ab
		ready    bool
		err      bool
	}{
		{"order does not matter", []ChildPlan{{"b", "p2"}, {"a", "p1"}}, true, true, false},
		{"a group planned again", []ChildPlan{{"a", "p1"}, {"b", "p3"}}, false, true, false},
		{"a group more", []ChildPlan{{"a", "p1"}, {"b", "p2"}, {"c", "p4"}}, false, true, false},
		{"a group less", []ChildPlan{{"a", "p1"}}, false, true, false},
		{"plans swapped between groups", []ChildPlan{{"a", "p2"}, {"b", "p1"}}, false, true, false},
		{"a name and plan that run together", []ChildPlan{{"a p1\nb", "p2"}}, false, true, false},
		{"still planning", []ChildPlan{{"a", "p1"}, {"b", ""}}, false, false, false},
		{"a group twice", []ChildPlan{{"a", "p1"}, {"a", "p1"}}, false, false, true},
		{"no groups", nil, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := PlanDigest(tt.children)
			if (err != nil) != tt.err || ok != tt.ready || (got == d) != tt.same {
				t.Fatalf("PlanDigest = %q %v %v; want same %v, ready %v, error %v", got, ok, err, tt.same, tt.ready, tt.err)
			}
			if !ok && got != "" {
				t.Errorf("a digest %q while not ready", got)
			}
		})
	}
}

func TestNext(t *testing.T) {
	rows := func(states ...State) []Row {
		out := make([]Row, len(states))
		for i, s := range states {
			out[i] = Row{Group: string(rune('a' + i)), State: s}
		}
		return out
	}
	tests := []struct {
		name        string
		rows        []Row
		parallelism int
		cont        bool
		start       []string
		giveUp      []string
		done        bool
	}{
		{"first step, one at a time", rows(Waiting, Waiting, Waiting), 1, false, []string{"a"}, nil, false},
		{"parallelism 0 is 1", rows(Waiting, Waiting), 0, false, []string{"a"}, nil, false},
		{"two at a time", rows(Waiting, Waiting, Waiting), 2, false, []string{"a", "b"}, nil, false},
		{"one running fills one slot", rows(Succeeded, Running, Waiting, Waiting), 2, false, []string{"c"}, nil, false},
		{"slots full", rows(Running, Running, Waiting), 2, false, nil, nil, false},
		{"failure stops the waiting ones", rows(Failed, Waiting, Waiting), 2, false, nil, []string{"b", "c"}, true},
		{"failure with one still running", rows(Failed, Running, Waiting), 2, false, nil, []string{"c"}, false},
		{"continueOnError goes on", rows(Failed, Waiting), 1, true, []string{"b"}, nil, false},
		{"all finished", rows(Succeeded, Failed, NotAttempted), 1, false, nil, nil, true},
		{"last one running", rows(Succeeded, Running), 1, true, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Next(tt.rows, tt.parallelism, tt.cont)
			if !slices.Equal(s.Start, tt.start) || !slices.Equal(s.GiveUp, tt.giveUp) || s.Done != tt.done {
				t.Fatalf("Next = %+v; want start %q, give up %q, done %v", s, tt.start, tt.giveUp, tt.done)
			}
		})
	}
}
