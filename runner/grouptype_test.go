package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestCheckGroupType: every stated kind against every kind a group can be
// found to be, and no group at all. Only the same kind, Auto, or a
// consumer-group kind for a group that does not exist yet passes; every
// refusal names the field, the group and both kinds.
func TestCheckGroupType(t *testing.T) {
	kinds := []string{config.GroupTypeClassic, config.GroupTypeConsumer, config.GroupTypeShare, config.GroupTypeStreams}
	for _, stated := range config.GroupTypes {
		for _, found := range append([]string{""}, kinds...) {
			err := checkGroupType("g", stated, found)
			pass := stated == config.GroupTypeAuto || stated == found ||
				(found == "" && (stated == config.GroupTypeClassic || stated == config.GroupTypeConsumer))
			if pass {
				if err != nil {
					t.Errorf("stated %s, found %q: refused: %v", stated, found, err)
				}
				continue
			}
			var km *kindMismatchError
			if !errors.As(err, &km) {
				t.Errorf("stated %s, found %q: %v, want a kind mismatch", stated, found, err)
				continue
			}
			msg := config.FieldNamesFlags.Expand(err.Error())
			for _, want := range []string{"--group-type: " + stated, "group g", "nothing was planned or changed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stated %s, found %q: %q does not say %q", stated, found, msg, want)
				}
			}
			switch {
			case found != "" && !strings.Contains(msg, "is a "+found+" group"):
				t.Errorf("stated %s, found %s: %q does not name the kind found", stated, found, msg)
			case found == "" && !strings.Contains(msg, "does not exist"):
				t.Errorf("stated %s, no group: %q does not say so", stated, msg)
			}
			if spec := config.FieldNamesSpec.Expand(err.Error()); !strings.HasPrefix(spec, "spec.groupType: ") {
				t.Errorf("in a request's names: %q", spec)
			}
		}
	}
}

func TestFoundType(t *testing.T) {
	for _, tc := range []struct {
		kind groupkind.Kind
		typ  string
		want string
	}{
		{groupkind.Consumer, "", ""},
		{groupkind.Consumer, config.GroupTypeClassic, config.GroupTypeClassic},
		{groupkind.Consumer, config.GroupTypeConsumer, config.GroupTypeConsumer},
		{groupkind.Share, "", config.GroupTypeShare},
		{groupkind.Streams, "", config.GroupTypeStreams},
	} {
		if got := foundType(groupkind.Info{Kind: tc.kind}, GroupInfo{Type: tc.typ}); got != tc.want {
			t.Errorf("foundType(%s, %q) = %q, want %q", tc.kind, tc.typ, got, tc.want)
		}
	}
}

// TestCheckFileType: a plan: or undo: file applies only to a group of its
// own family (share, or consumer of either protocol), and an old file
// without a kind only to a consumer group.
func TestCheckFileType(t *testing.T) {
	file := func(kind config.TargetKind, was string) config.Target {
		return config.Target{Kind: kind, File: "/in/r.json", Result: &report.Result{GroupType: was}}
	}
	for _, tc := range []struct {
		target config.Target
		found  string
		want   string // "" passes
	}{
		{config.Target{Kind: config.KindEarliest}, config.GroupTypeShare, ""},
		{file(config.KindPlan, config.GroupTypeShare), config.GroupTypeShare, ""},
		{file(config.KindUndo, config.GroupTypeShare), config.GroupTypeShare, ""},
		{file(config.KindPlan, config.GroupTypeClassic), config.GroupTypeConsumer, ""},
		{file(config.KindPlan, ""), config.GroupTypeClassic, ""},
		{file(config.KindPlan, config.GroupTypeClassic), "", ""},
		{file(config.KindPlan, config.GroupTypeShare), config.GroupTypeClassic, "--to plan:: plan:/in/r.json is a plan of a Share group, and group g is now a Classic group"},
		{file(config.KindUndo, config.GroupTypeShare), "", "--to undo:: undo:/in/r.json is the result of a run of a Share group, and group g is now a group that does not exist"},
		{file(config.KindUndo, config.GroupTypeConsumer), config.GroupTypeShare, "is the result of a run of a Consumer group, and group g is now a Share group"},
		{file(config.KindPlan, ""), config.GroupTypeShare, "a consumer group (it names no kind)"},
	} {
		err := checkFileType(tc.target, "g", tc.found)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s on %q: refused: %v", tc.target.Kind, tc.found, err)
		case tc.want != "" && (err == nil || !strings.Contains(config.FieldNamesFlags.Expand(err.Error()), tc.want)):
			t.Errorf("%s on %q: %v, want %q", tc.target.Kind, tc.found, err, tc.want)
		}
	}
}

// TestStreamsScope: a streams group's scope is its topology's source
// topics, as kafka-streams-groups.sh --all-input-topics takes them: the
// offsets on its repartition topics are left out with a warning (the
// expectation until now kept them: that was the bug), and moved only when
// named, as --input-topic moves them; a named topic outside the topology
// is refused, one from the group's own offsets left out with a warning.
func TestStreamsScope(t *testing.T) {
	info := groupkind.Info{Kind: groupkind.Streams, SourceTopics: []string{"orders"}, RepartitionTopics: []string{"app-agg-repartition"}}
	tps := func(topics ...string) []TP {
		var out []TP
		for _, tp := range topics {
			out = append(out, TP{Topic: tp}, TP{Topic: tp, Partition: 1})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		info      groupkind.Info
		parts     []TP
		named     bool
		kept      int
		warn, err string
	}{
		{"input, repartition left out", info, tps("orders", "app-agg-repartition"), false, 2, "left out: the group's committed offsets on its repartition topics app-agg-repartition, as kafka-streams-groups.sh --all-input-topics leaves them", ""},
		{"named input", info, tps("orders"), true, 2, "", ""},
		{"named repartition", info, tps("app-agg-repartition"), true, 2, "", ""},
		{"named input and repartition", info, tps("orders", "app-agg-repartition"), true, 4, "", ""},
		{"only repartition offsets", info, tps("app-agg-repartition"), false, 0, "", "no committed offset on its input topics (orders)"},
		{"the group's other offsets", info, tps("orders", "audit"), false, 2, "left out: the group's committed offsets on audit", ""},
		{"named outside", info, tps("orders", "audit"), true, 0, "", "--topic: audit: not an input topic of streams group app, whose topology reads orders and its repartition topics app-agg-repartition"},
		{"nothing left", info, tps("audit"), false, 0, "", "no committed offset on its input topics"},
		{"no topology", groupkind.Info{Kind: groupkind.Streams}, tps("orders"), false, 0, "", "has no topology yet"},
	} {
		kept, w, err := streamsScope(tc.parts, tc.info, "app", config.Ref(config.FlagTopic), tc.named)
		if tc.err != "" {
			if err == nil || !strings.Contains(config.FieldNamesFlags.Expand(err.Error()), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || len(kept) != tc.kept || !strings.Contains(w, tc.warn) || (tc.warn == "") != (w == "") {
			t.Errorf("%s: kept %v, warning %q, %v; want %d kept, warning %q", tc.name, kept, w, err, tc.kept, tc.warn)
		}
	}
	if n := streamsNote("app", info, tps("orders", "app-agg-repartition"), false); !strings.Contains(n, "local state") || !strings.Contains(n, "repartition topics app-agg-repartition are moved") {
		t.Errorf("note %q", n)
	}
	if n := streamsNote("app", info, tps("orders"), false); strings.Contains(n, "are moved like") {
		t.Errorf("note names no repartition topic in scope: %q", n)
	}
	// With --delete-all-internal-topics the note names what goes.
	info.InternalTopics = []string{"app-agg-repartition", "app-store-changelog"}
	if n := config.FieldNamesFlags.Expand(streamsNote("app", info, tps("orders"), true)); !strings.Contains(n, "--delete-all-internal-topics deletes its internal topics") || !strings.Contains(n, "never in a dry run: app-agg-repartition, app-store-changelog") {
		t.Errorf("note while deleting: %q", n)
	}
	info.InternalTopics = nil
	if n := streamsNote("app", info, tps("orders"), true); !strings.Contains(n, "none (its topology names no internal topic of its own)") {
		t.Errorf("note while deleting nothing: %q", n)
	}
}

// TestDeletedTopics: the outcome of deleting a streams group's internal
// topics after its offsets moved. Every topic deleted (or already gone,
// which deleteTopics does not report as failed) is success; any other is
// exit 5 naming each topic not deleted with Kafka's answer, the others
// still reported deleted; a request that failed as a whole fails them all.
func TestDeletedTopics(t *testing.T) {
	planned := []string{"app-a-changelog", "app-b-repartition"}
	denied := errors.New("TOPIC_AUTHORIZATION_FAILED")
	for _, tc := range []struct {
		name    string
		failed  map[string]error
		err     error
		deleted []string
		says    []string // in the error; none: success
	}{
		{"all deleted", nil, nil, planned, nil},
		{"one refused", map[string]error{"app-b-repartition": denied}, nil, []string{"app-a-changelog"},
			[]string{"the offsets are moved", "1 internal topic(s) were not deleted: app-b-repartition (TOPIC_AUTHORIZATION_FAILED)", "kafka-topics.sh --delete"}},
		{"the request failed", nil, errors.New("connection refused"), nil,
			[]string{"2 internal topic(s) were not deleted: app-a-changelog (connection refused), app-b-repartition (connection refused)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted, msg := deletedTopics(planned, tc.failed, tc.err)
			if strings.Join(deleted, ",") != strings.Join(tc.deleted, ",") {
				t.Errorf("deleted %q, want %q", deleted, tc.deleted)
			}
			if (msg == "") != (len(tc.says) == 0) {
				t.Fatalf("error %q, want one saying %q", msg, tc.says)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
		})
	}
}

// TestStaleInternalTopics: a plan: target's plan deletes the internal
// topics it listed only while the group's topology names exactly those;
// any other set (one more, one fewer, another) is PlanStale, naming both
// lists. Without the flag, or for another target, nothing is held.
func TestStaleInternalTopics(t *testing.T) {
	planned := &report.InternalTopics{Planned: []string{"app-b-repartition", "app-a-changelog"}}
	for _, tc := range []struct {
		name    string
		planned *report.InternalTopics
		now     []string
		ofPlan  bool
		says    string // empty: not stale
	}{
		{"the same, in another order", planned, []string{"app-a-changelog", "app-b-repartition"}, true, ""},
		{"one more now", planned, []string{"app-a-changelog", "app-b-repartition", "app-c-changelog"}, true, "now names app-a-changelog, app-b-repartition, app-c-changelog"},
		{"one fewer now", planned, []string{"app-a-changelog"}, true, "the plan deletes the internal topics app-a-changelog, app-b-repartition, and the group's topology now names app-a-changelog:"},
		{"none now", planned, nil, true, "now names none"},
		{"planned none, one now", &report.InternalTopics{}, []string{"app-a-changelog"}, true, "the plan deletes the internal topics none"},
		{"planned none, none now", &report.InternalTopics{}, nil, true, ""},
		{"no flag", nil, []string{"app-a-changelog"}, true, ""},
		{"not a plan: target", planned, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := staleInternalTopics(tc.planned, tc.now, tc.ofPlan)
			switch {
			case tc.says == "" && ref != nil:
				t.Fatalf("refused: %+v", ref)
			case tc.says == "":
			case ref == nil:
				t.Fatalf("not refused, want PlanStale saying %q", tc.says)
			case ref.Reason != report.ReasonPlanStale || !strings.Contains(ref.Error, tc.says) || !strings.Contains(ref.Error, "nothing was committed or deleted"):
				t.Errorf("%s %q, want PlanStale saying %q", ref.Reason, ref.Error, tc.says)
			}
		})
	}
}

// TestUndoneDeletions: an undo of a run that deleted a streams group's
// internal topics warns that they stay gone; of any other run, nothing.
func TestUndoneDeletions(t *testing.T) {
	deleted := &report.Result{Group: "app", InternalTopics: &report.InternalTopics{Planned: []string{"app-a-changelog", "app-b-repartition"}, Deleted: []string{"app-a-changelog"}}}
	w := undoneDeletions(config.Target{Kind: config.KindUndo, Result: deleted})
	if !strings.Contains(w, "deleted the internal topics app-a-changelog of streams group app, which an undo cannot recreate") || strings.Contains(w, "app-b-repartition") {
		t.Errorf("warning %q", w)
	}
	for name, tgt := range map[string]config.Target{
		"nothing deleted": {Kind: config.KindUndo, Result: &report.Result{Group: "app", InternalTopics: &report.InternalTopics{Planned: []string{"app-a-changelog"}}}},
		"no flag":         {Kind: config.KindUndo, Result: &report.Result{Group: "app"}},
		"a plan: target":  {Kind: config.KindPlan, Result: deleted},
		"an absolute one": {Kind: config.KindEarliest},
	} {
		if w := undoneDeletions(tgt); w != "" {
			t.Errorf("%s: warning %q", name, w)
		}
	}
}
