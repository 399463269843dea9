package report

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCompactGroups: a listing too long for a termination message keeps
// a prefix of whole groups within the limit and counts the rest in
// Omitted, so a reader knows the copy is not the whole list; one that
// fits is kept whole.
func TestCompactGroups(t *testing.T) {
	var g Groups
	for i := range 200 {
		g.Groups = append(g.Groups, Group{Group: fmt.Sprintf("team-a-%03d", i), GroupType: "Classic", State: "Empty", Topics: []string{"orders"}, Committed: []string{"orders"}})
	}
	for _, tc := range []struct {
		groups int
		limit  int
	}{{0, MaxTerminationMessageBytes}, {3, MaxTerminationMessageBytes}, {200, MaxTerminationMessageBytes}, {200, 200}, {200, 80}} {
		in := Groups{Groups: g.Groups[:tc.groups]}
		b, err := CompactGroups(in, tc.limit)
		if err != nil {
			t.Fatalf("%d groups in %d bytes: %v", tc.groups, tc.limit, err)
		}
		if len(b) > tc.limit {
			t.Errorf("%d groups: %d bytes, over %d", tc.groups, len(b), tc.limit)
		}
		got, err := DecodeGroups(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Groups)+got.Omitted != tc.groups {
			t.Errorf("%d groups in %d bytes: %d listed + %d omitted", tc.groups, tc.limit, len(got.Groups), got.Omitted)
		}
		// The longest prefix: one more group would not fit.
		if got.Omitted > 0 {
			more := Groups{Schema: GroupsSchema, Groups: g.Groups[:len(got.Groups)+1], Omitted: got.Omitted - 1}
			if mb, _ := json.Marshal(more); len(mb) <= tc.limit {
				t.Errorf("%d groups in %d bytes: kept %d, but %d fit", tc.groups, tc.limit, len(got.Groups), len(got.Groups)+1)
			}
		}
		for i, x := range got.Groups {
			if x.Group != g.Groups[i].Group || len(x.Committed) != 1 {
				t.Errorf("group %d: %+v, want %s whole", i, x, g.Groups[i].Group)
			}
		}
	}
	if _, err := CompactGroups(Groups{}, 10); err == nil {
		t.Error("10 bytes: no error, yet no listing fits")
	}
}
