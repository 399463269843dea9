package fanout

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
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
