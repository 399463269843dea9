package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

func TestVerifyShare(t *testing.T) {
	prev := func(o int64) *int64 { return &o }
	parts := func() []report.Partition {
		return []report.Partition{
			{Topic: "o", Partition: 0, PreviousOffset: prev(5), NewOffset: 0},
			{Topic: "o", Partition: 1, NewOffset: 0}, // no start offset before
		}
	}
	commit := []bool{true, true}
	both := func(a, b int64) groupkind.Offsets { return groupkind.Offsets{"o": {0: a, 1: b}} }
	for _, tc := range []struct {
		name    string
		answers map[string]map[int32]error
		ansErr  error
		after   groupkind.Offsets
		readErr error
		code    report.ExitCode
		reason  report.Reason
	}{
		{name: "every partition set", after: both(0, 0), code: report.ExitOK, reason: report.ReasonApplied},
		{name: "set although the answer was lost", ansErr: context.DeadlineExceeded, after: both(0, 0), code: report.ExitOK, reason: report.ReasonApplied},
		{name: "refused because the group has members", ansErr: kerr.NonEmptyGroup, after: groupkind.Offsets{"o": {0: 5}}, code: report.ExitGroupActive, reason: report.ReasonGroupActive},
		{name: "refused per partition", answers: map[string]map[int32]error{"o": {0: kerr.UnknownTopicOrPartition, 1: kerr.UnknownTopicOrPartition}}, after: groupkind.Offsets{"o": {0: 5}}, code: report.ExitKafkaError, reason: report.ReasonKafkaError},
		{name: "a lost answer and nothing moved yet", ansErr: context.DeadlineExceeded, after: groupkind.Offsets{"o": {0: 5}}, code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown},
		{name: "the read-back failed", readErr: errors.New("boom"), code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown},
		{name: "one set, one not", answers: map[string]map[int32]error{"o": {1: kerr.UnknownServerError}}, after: groupkind.Offsets{"o": {0: 0}}, code: report.ExitPartiallyApplied, reason: report.ReasonPartiallyApplied},
		{name: "another client set it", after: both(7, 0), code: report.ExitPartiallyApplied, reason: report.ReasonPartiallyApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := parts()
			v := verifyShare(ps, commit, tc.answers, tc.ansErr, tc.after, tc.readErr)
			if v.Code != tc.code || v.Reason != tc.reason {
				t.Fatalf("%d %s (%s), want %d %s", v.Code, v.Reason, v.Error, tc.code, tc.reason)
			}
			for _, p := range ps {
				if p.Applied == (p.Error != "") {
					t.Errorf("%s/%d: applied %v with error %q", p.Topic, p.Partition, p.Applied, p.Error)
				}
			}
		})
	}
}

func TestClassicStreamsWarning(t *testing.T) {
	c := func(topics ...string) map[TP]Committed {
		m := map[TP]Committed{}
		for _, tp := range topics {
			m[TP{Topic: tp}] = Committed{}
			m[TP{Topic: tp, Partition: 1}] = Committed{}
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		group string
		in    map[TP]Committed
		want  string // in the warning; "" for none
	}{
		{"a plain consumer group", "billing", c("orders"), ""},
		{"a Streams application's repartition topic", "wordcount", c("text", "wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"), "wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"},
		{"another application's repartition topic", "billing", c("wordcount-x-repartition"), ""},
		{"a name that only starts like one", "app", c("app-orders"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classicStreamsWarning(tc.group, tc.in)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("%q, want one naming %q", got, tc.want)
			}
			if got != "" && strings.Count(got, tc.want) != 1 {
				t.Errorf("%q names the topic more than once", got)
			}
		})
	}
}
