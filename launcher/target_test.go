package launcher

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitResolveTarget(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	s := func(v string) *string { return &v }
	i := func(v int64) *int64 { return &v }
	earliest, bogus := v1alpha1.PositionEarliest, v1alpha1.Position("Middle")
	cases := []struct {
		name    string
		target  v1alpha1.Target
		want    string
		wantErr string
	}{
		{"time", v1alpha1.Target{Time: s("2026-03-01T09:30:00Z")}, "time:2026-03-01T09:30:00Z", ""},
		{"ago, millisecond precision", v1alpha1.Target{Ago: &metav1.Duration{Duration: 90 * time.Minute}}, "time:2026-03-01T10:30:00.123Z", ""},
		{"earliest", v1alpha1.Target{Position: &earliest}, "earliest", ""},
		{"offset", v1alpha1.Target{Offset: i(0)}, "offset:0", ""},
		{"shift", v1alpha1.Target{ShiftBy: i(-5)}, "shift:-5", ""},
		{"group", v1alpha1.Target{FromGroup: s("other")}, "group:other", ""},
		{"offsets", v1alpha1.Target{Offsets: []v1alpha1.PartitionOffset{{Topic: "a", Partition: 0, Offset: 1}, {Topic: "a", Partition: 1, Offset: 1}}}, "offsets:2", ""},
		{"time without zone", v1alpha1.Target{Time: s("2026-03-01T09:30:00")}, "", "no time zone"},
		{"time before 1970", v1alpha1.Target{Time: s("1969-12-31T23:59:59Z")}, "", "before 1970"},
		{"negative ago", v1alpha1.Target{Ago: &metav1.Duration{Duration: -time.Hour}}, "", "positive"},
		{"zero shift", v1alpha1.Target{ShiftBy: i(0)}, "", "must not be 0"},
		{"negative offset", v1alpha1.Target{Offset: i(-1)}, "", "≥ 0"},
		{"unknown position", v1alpha1.Target{Position: &bogus}, "", "Earliest or Latest"},
		{"duplicate offsets", v1alpha1.Target{Offsets: []v1alpha1.PartitionOffset{{Topic: "a", Partition: 0, Offset: 1}, {Topic: "a", Partition: 0, Offset: 2}}}, "", "both name"},
		{"undo", v1alpha1.Target{UndoOf: s("rewind")}, "undo:rewind", ""},
		{"undo of nothing", v1alpha1.Target{UndoOf: s("")}, "", "must name a ReplayRequest"},
		{"nothing", v1alpha1.Target{}, "", "sets none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTarget(tc.target, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ResolveTarget = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestUnitValidateSpecUsesTheRunnersRules(t *testing.T) {
	ok := testutil.MakeRequest("ns", "a").Topic("orders", 0, 1).Obj()
	if err := ValidateSpec(&ok.Spec); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	bad := testutil.MakeRequest("ns", "a").Bootstrap("kafka").Group(" padded").Topic("bad topic!").FromGroup(" padded").Obj()
	err := ValidateSpec(&bad.Spec)
	for _, field := range []string{"kafka.bootstrapServers", "group", "topics", "target.fromGroup"} {
		if err == nil || !strings.Contains(err.Error(), field+":") {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
	// The schema's undo rules, as a backstop: topics must be empty with
	// undoOf, and force needs undoOf.
	undo := testutil.MakeRequest("ns", "a").Topic("orders").UndoOf("rewind").Obj()
	if err := ValidateSpec(&undo.Spec); err == nil || !strings.Contains(err.Error(), "topics: must be empty with target.undoOf") {
		t.Errorf("undoOf with topics: %v", err)
	}
	forced := testutil.MakeRequest("ns", "a").ShiftBy(-1).Force().Obj()
	if err := ValidateSpec(&forced.Spec); err == nil || !strings.Contains(err.Error(), "force: is only allowed with target.undoOf") {
		t.Errorf("force without undoOf: %v", err)
	}
	if ok := testutil.MakeRequest("ns", "a").UndoOf("rewind").Force().Obj(); ValidateSpec(&ok.Spec) != nil {
		t.Errorf("a forced undo refused: %v", ValidateSpec(&ok.Spec))
	}
	// A consumer that cannot be a member of the stated kind of group
	// (pauseKindErrors), before anything is paused.
	source := testutil.MakeRequest("ns", "a").Topic("orders").Obj()
	source.Spec.GroupType = "Streams"
	source.Spec.Consumers = []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerKafkaSource, Name: "src"}}
	if err := ValidateSpec(&source.Spec); err == nil || !strings.Contains(err.Error(), "consumers[0]: KafkaSource src consumes through a consumer group, never a Streams group") {
		t.Errorf("a KafkaSource paused for a streams group: %v", err)
	}
}
