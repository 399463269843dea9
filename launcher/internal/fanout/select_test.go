package fanout

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

func TestSelect(t *testing.T) {
	listed := []Candidate{
		{Group: "team-a-billing", Committed: []string{"orders"}},
		{Group: "team-a-audit", Committed: []string{"payments"}},
		{Group: "team-a-audit-shadow", Committed: []string{"orders", "payments"}},
		{Group: "team-b-billing", Committed: []string{"orders"}},
		{Group: "xteam-a-billing", Committed: []string{"orders"}},
		{Group: "team-a-billing", Committed: []string{"orders"}}, // listed twice (two brokers)
	}
	prefix := func(p string) v1alpha1.GroupPattern { return v1alpha1.GroupPattern{Prefix: p} }
	regex := func(r string) v1alpha1.GroupPattern { return v1alpha1.GroupPattern{Regex: r} }
	tests := []struct {
		name string
		sel  v1alpha1.GroupSelector
		want []string
		err  string
	}{
		{"prefix", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-a-")}}, []string{"team-a-audit", "team-a-audit-shadow", "team-a-billing"}, ""},
		{"prefix and exclude by regex", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-a-")}, Exclude: []v1alpha1.GroupPattern{regex(".*-shadow")}}, []string{"team-a-audit", "team-a-billing"}, ""},
		{"regex is the whole name", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{regex("team-.-billing")}}, []string{"team-a-billing", "team-b-billing"}, ""},
		{"two includes", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-b"), prefix("xteam")}}, []string{"team-b-billing", "xteam-a-billing"}, ""},
		{"with offsets on a topic", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-a-")}, WithOffsetsOn: []string{"payments"}}, []string{"team-a-audit", "team-a-audit-shadow"}, ""},
		{"matches nothing", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-c-")}}, nil, "spec.groupSelector: matches no group of the 6 groups"},
		{"nothing with offsets there", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("team-b")}, WithOffsetsOn: []string{"payments"}}, nil, "with committed offsets on payments"},
		{"bad regex", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("a"), regex("team-(")}}, nil, "spec.groupSelector.include[1].regex"},
		{"bad exclude", v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{prefix("a")}, Exclude: []v1alpha1.GroupPattern{{}}}, nil, "spec.groupSelector.exclude[0]: set exactly one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(listed, &tt.sel)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Select = %q, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Select = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestResolve: a list Job's listing resolved: a selector's match, a
// listing cut short, a group whose commits were not read (refused only
// when withOffsetsOn asks and its name matches), no match, and more than
// MaxGroups. Each refusal has its reason.
func TestResolve(t *testing.T) {
	g := func(name string, committed ...string) report.Group {
		return report.Group{Group: name, Committed: committed}
	}
	unread := report.Group{Group: "team-a-lost", Error: "committed offsets: NOT_COORDINATOR"}
	var many []report.Group
	for i := range MaxGroups + 1 {
		many = append(many, g(fmt.Sprintf("bulk-%04d", i), "orders"))
	}
	prefix := func(p string) []v1alpha1.GroupPattern { return []v1alpha1.GroupPattern{{Prefix: p}} }
	tests := []struct {
		name    string
		listing report.Groups
		sel     v1alpha1.GroupSelector
		want    []string
		reason  string
		msg     string
	}{
		{"match", report.Groups{Groups: []report.Group{g("team-a-x", "orders"), g("team-a-y"), g("team-b-x", "orders")}}, v1alpha1.GroupSelector{Include: prefix("team-a-")}, []string{"team-a-x", "team-a-y"}, "", ""},
		{"with offsets: assigned is not committed", report.Groups{Groups: []report.Group{g("team-a-x", "orders"), {Group: "team-a-y", Topics: []string{"orders"}}}}, v1alpha1.GroupSelector{Include: prefix("team-a-"), WithOffsetsOn: []string{"orders"}}, []string{"team-a-x"}, "", ""},
		{"cut short", report.Groups{Groups: []report.Group{g("team-a-x")}, Omitted: 3}, v1alpha1.GroupSelector{Include: prefix("team-a-")}, nil, ReasonListingIncomplete, "leaves out 3 groups"},
		{"unread and asked", report.Groups{Groups: []report.Group{g("team-a-x", "orders"), unread}}, v1alpha1.GroupSelector{Include: prefix("team-a-"), WithOffsetsOn: []string{"orders"}}, nil, ReasonListingIncomplete, "of team-a-lost could not be read"},
		{"unread, other name", report.Groups{Groups: []report.Group{g("team-b-x", "orders"), unread}}, v1alpha1.GroupSelector{Include: prefix("team-b-"), WithOffsetsOn: []string{"orders"}}, []string{"team-b-x"}, "", ""},
		{"unread, names only", report.Groups{Groups: []report.Group{unread}}, v1alpha1.GroupSelector{Include: prefix("team-a-")}, []string{"team-a-lost"}, "", ""},
		{"no match", report.Groups{Groups: []report.Group{g("team-b-x")}}, v1alpha1.GroupSelector{Include: prefix("team-a-")}, nil, ReasonNoGroupsMatched, "spec.groupSelector: matches no group of the 1 groups"},
		{"too many", report.Groups{Groups: many}, v1alpha1.GroupSelector{Include: prefix("bulk-")}, nil, ReasonTooManyGroups, "matches 501 groups, more than the 500 a request takes; narrow the selector"},
		{"exactly the most", report.Groups{Groups: many[:MaxGroups]}, v1alpha1.GroupSelector{Include: prefix("bulk-")}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.listing, &tt.sel)
			if tt.reason != "" {
				var se *SelectError
				if !errors.As(err, &se) || se.Reason != tt.reason || !strings.Contains(se.Message, tt.msg) {
					t.Fatalf("Resolve = %q, %v; want %s saying %q", got, err, tt.reason, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if tt.want != nil && !slices.Equal(got, tt.want) || tt.want == nil && len(got) != MaxGroups {
				t.Fatalf("Resolve = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestNameSome(t *testing.T) {
	if got := nameSome([]string{"a", "b", "c", "d", "e", "f", "g"}); got != "a, b, c, d, e and 2 more" {
		t.Errorf("nameSome = %q", got)
	}
}

func TestReplayable(t *testing.T) {
	listing := report.Groups{Omitted: 3, Groups: []report.Group{
		{Group: "classic", GroupType: "Classic", ProtocolType: "consumer"},
		{Group: "offsets-only", GroupType: "Classic"},
		{Group: "old-broker"},
		{Group: "connect", GroupType: "Classic", ProtocolType: "connect"},
		{Group: "kip848", GroupType: "Consumer", ProtocolType: "consumer"},
		{Group: "share", GroupType: "Share"},
		{Group: "streams", GroupType: "Streams"},
	}}
	from := "kip848"
	for _, tc := range []struct {
		name string
		spec v1alpha1.ReplayRequestSpec
		want []string
	}{
		{"unset: consumer groups, as --all-groups", v1alpha1.ReplayRequestSpec{}, []string{"classic", "offsets-only", "old-broker", "kip848"}},
		{"Auto", v1alpha1.ReplayRequestSpec{GroupType: "Auto"}, []string{"classic", "offsets-only", "old-broker", "kip848"}},
		{"Streams", v1alpha1.ReplayRequestSpec{GroupType: "Streams"}, []string{"streams"}},
		{"Classic: every classic group", v1alpha1.ReplayRequestSpec{GroupType: "Classic"}, []string{"classic", "offsets-only", "old-broker", "connect"}},
		{"without the source group", v1alpha1.ReplayRequestSpec{Target: v1alpha1.Target{FromGroup: &from}}, []string{"classic", "offsets-only", "old-broker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Replayable(listing, &tc.spec)
			var names []string
			for _, g := range got.Groups {
				names = append(names, g.Group)
			}
			if !slices.Equal(names, tc.want) || got.Omitted != 3 {
				t.Fatalf("%v (omitted %d), want %v", names, got.Omitted, tc.want)
			}
		})
	}
}
