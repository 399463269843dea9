package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The differential test: on one Apache Kafka cluster, the runner's dry-run
// plan against Kafka's own kafka-consumer-groups.sh --reset-offsets
// --dry-run --export (ConsumerGroupCommand), for every target kind, every
// scope and awkward data, on the same groups. Every difference is one of
// the deliberate ones that docs/usage.md lists ("Differences from
// kafka-consumer-groups.sh"), and a case says which it expects; any other
// difference fails the test.

// The oracle's world: topics with awkward data, and groups that committed
// them in awkward places. Record timestamps are relative to the test's
// start, in two clusters hours apart, so that --by-duration (which both
// tools resolve against their own clock, seconds apart) never lands near
// a record.
const (
	oMixed   = "mixed"   // p0: 10 records; p1: empty; p2: 10 records, log start moved to 4
	oOOO     = "ooo"     // 8 records, timestamps out of order
	oTxn     = "txn"     // transactions: committed, aborted, committed, one left open
	oCompact = "compact" // compacted: repeated keys, older values cleaned away

	gFull    = "oracle-full"    // committed everywhere, some below log start and above log end
	gPartial = "oracle-partial" // committed on some partitions only
	gNone    = "oracle-none"    // never committed
)

// scopeAll is Kafka's --all-topics, the runner's empty scope.
var scopeAll = []string{"--all-topics"}

var (
	scopeList   = []string{"--topic", oMixed, "--topic", oOOO, "--topic", oTxn, "--topic", oCompact}
	scopeSubset = []string{"--topic", oMixed + ":0,2", "--topic", oTxn + ":0"}
)

// difference names a deliberate difference from Kafka's tool, as listed in
// docs/usage.md. A case expects at most one.
type difference string

const (
	// same: the runner plans exactly what Kafka's tool plans.
	same difference = ""
	// bothRefuse: neither tool plans anything (the runner exits 2).
	bothRefuse difference = "both refuse"
	// diffShiftOverflow: a shift past the largest offset lands on the log
	// end; Kafka's tool wraps around to a negative offset and clamps that
	// to the log start.
	diffShiftOverflow difference = "shift overflow"
	// diffShiftUncommitted: a shift with partitions in scope that the
	// group never committed leaves those alone (a warning names them) and
	// plans the others; Kafka's tool refuses the whole reset. With no
	// committed partition in scope at all the runner refuses too (exit 2).
	diffShiftUncommitted difference = "shift of uncommitted partitions"
	// diffNothingCommitted: an empty scope (--all-topics) for a group with
	// no committed offsets is refused (exit 2); Kafka's tool plans nothing
	// and succeeds.
	diffNothingCommitted difference = "all topics of a group with no commits"
	// diffFileOtherGroup: a CSV with rows of another group is refused
	// (exit 2), naming the line; Kafka's tool applies its group's rows.
	diffFileOtherGroup difference = "CSV rows of another group"
	// diffFileTwice: a file naming a partition twice is refused (exit 2);
	// Kafka's tool takes the last row.
	diffFileTwice difference = "a partition twice in a file"
	// diffFileWithTopic: --from-file with --topic is refused (exit 2);
	// Kafka's tool ignores --topic and applies the file.
	diffFileWithTopic difference = "--from-file with --topic"
	// diffScopeTwice: a scope naming a partition twice (orders:0 and
	// orders) plans it once; Kafka's tool fails (a duplicate key).
	diffScopeTwice difference = "a partition twice in the scope"
	// diffZonelessTime: a --to-datetime without a zone is refused (exit 2);
	// Kafka's tool reads it in the JVM's local zone.
	diffZonelessTime difference = "a time without a zone"
)

type oracleCase struct {
	name   string
	groups []string
	scope  []string
	// target is the same flags for both tools: the runner's aliases are
	// Kafka's names.
	target []string
	differ difference
	// kafkaOnly are flags for Kafka's tool alone.
	kafkaOnly []string
	// plain is, for diffScopeTwice, the scope naming each partition once.
	plain []string
	// selectGroups, when set, chooses the groups for Kafka's tool instead
	// of a --group per group (--all-groups, or the groups in another order).
	selectGroups []string
}

// tp is a partition as both tools' outputs name it.
type tp struct {
	topic     string
	partition int32
}

func (p tp) String() string { return fmt.Sprintf("%s/%d", p.topic, p.partition) }

// plan is one group's new offset per partition.
type plan map[tp]int64

// oracleWorld is the cluster, Kafka's tool, and what the test put there.
type oracleWorld struct {
	cluster   *kafkatest.Cluster
	bootstrap string
	tool      *consumerGroupTool
	dir       string
	// t0 is the first record's timestamp; the second cluster of records
	// starts two hours later.
	t0 time.Time
	// committed is what each group committed, as the test committed it.
	committed map[string]plan
}

func TestOracleKafkaConsumerGroups(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's jars and a broker: KAFKA_REPLAY_TEST_APACHE (make test-runner sets it)")
	}
	c := kafkatest.New(t, 1)
	w := newOracleWorld(t, c, libs)
	at := func(d time.Duration) string { return w.t0.Add(d).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	all := []string{gFull, gPartial, gNone}
	fileNoGroup := w.file(t, "no-group.csv", "mixed,0,3\nmixed,1,7\nmixed,2,0\nooo,0,6\ntxn,0,100\ncompact,0,2\n")
	fileFull := w.file(t, "full.csv", "oracle-full,mixed,0,3\noracle-full,mixed,2,9\noracle-full,txn,0,4\n")
	fileTwoGroups := w.file(t, "two-groups.csv", "oracle-full,mixed,0,3\noracle-partial,ooo,0,5\n")
	fileTwice := w.file(t, "twice.csv", "mixed,0,3\nmixed,0,5\n")
	fileMissing := w.file(t, "missing.csv", "mixed,0,3\nmixed,3,5\n")

	var cases []oracleCase
	// Every target kind over the list of topics, for every kind of group.
	for _, tg := range []struct {
		name   string
		target []string
	}{
		{"to-earliest", []string{"--to-earliest"}},
		{"to-latest", []string{"--to-latest"}},
		{"to-datetime before the first record", []string{"--to-datetime", at(-time.Hour)}},
		{"to-datetime at a record", []string{"--to-datetime", at(2 * time.Second)}},
		{"to-datetime between records", []string{"--to-datetime", at(2500 * time.Millisecond)}},
		// ooo's records are stamped 5, 1, 9, 3, 7, 2, 8, 4 s after t0.
		{"to-datetime amid out-of-order timestamps", []string{"--to-datetime", at(6 * time.Second)}},
		{"to-datetime between the two clusters", []string{"--to-datetime", at(time.Hour)}},
		{"to-datetime after the last record", []string{"--to-datetime", at(2*time.Hour + time.Minute)}},
		{"to-datetime in another zone", []string{"--to-datetime", w.t0.Add(3 * time.Second).In(time.FixedZone("", -5*3600-30*60)).Format("2006-01-02T15:04:05.000Z07:00")}},
		{"by-duration before the first record", []string{"--by-duration", "PT4H"}},
		{"by-duration between the clusters", []string{"--by-duration", "PT2H"}},
		{"by-duration after the last record", []string{"--by-duration", "PT30M"}},
		{"to-offset", []string{"--to-offset", "3"}},
		{"to-offset past every log end", []string{"--to-offset", "1000"}},
		{"to-offset 0", []string{"--to-offset", "0"}},
	} {
		cases = append(cases, oracleCase{name: tg.name, groups: all, scope: scopeList, target: tg.target})
	}
	// Kafka's tool reads a file without the group column for one --group
	// only.
	for _, g := range all {
		cases = append(cases, oracleCase{name: "from-file without the group column, " + g, groups: []string{g}, target: []string{"--from-file", fileNoGroup}})
	}
	// Every scope: all topics (the committed partitions), a list of
	// topics, subsets of partitions.
	for _, sc := range []struct {
		name  string
		scope []string
	}{{"all topics", scopeAll}, {"partitions", scopeSubset}} {
		for _, tg := range [][]string{{"--to-earliest"}, {"--to-latest"}, {"--to-datetime", at(2500 * time.Millisecond)}, {"--by-duration", "PT2H"}, {"--to-offset", "3"}} {
			cases = append(cases, oracleCase{name: sc.name + " " + strings.Join(tg, " "), groups: []string{gFull, gPartial}, scope: sc.scope, target: tg})
		}
	}
	// Shifts: from committed offsets inside the log, below its start and
	// above its end; past either end; both directions.
	for _, shift := range []string{"-3", "2", "-1000", "1000", "-9223372036854775808"} {
		for _, sc := range [][]string{scopeAll, scopeList, scopeSubset} {
			cases = append(cases, oracleCase{name: "shift-by " + shift + " " + sc[len(sc)-1], groups: []string{gFull}, scope: sc, target: []string{"--shift-by", shift}})
		}
		// Only the committed partitions: the same plan for both tools.
		cases = append(cases, oracleCase{name: "shift-by " + shift + " of a partly committed group, all topics", groups: []string{gPartial}, scope: scopeAll, target: []string{"--shift-by", shift}})
	}
	cases = append(cases,
		oracleCase{name: "from-file of the group", groups: []string{gFull}, target: []string{"--from-file", fileFull}},

		// What neither tool plans.
		oracleCase{name: "a topic that does not exist", groups: []string{gFull}, scope: []string{"--topic", "nosuch"}, target: []string{"--to-earliest"}, differ: bothRefuse},
		oracleCase{name: "a partition that does not exist", groups: []string{gFull}, scope: []string{"--topic", oMixed + ":0,7"}, target: []string{"--to-earliest"}, differ: bothRefuse},
		// Kafka's tool asks for the missing partition's offsets until its
		// --timeout (30 s by default); the runner refuses at once.
		oracleCase{name: "from-file naming a partition that does not exist", groups: []string{gFull}, target: []string{"--from-file", fileMissing}, differ: bothRefuse, kafkaOnly: []string{"--timeout", "1000"}},

		// The deliberate differences.
		oracleCase{name: "shift-by overflowing", groups: []string{gFull}, scope: scopeList, target: []string{"--shift-by", "9223372036854775807"}, differ: diffShiftOverflow},
		oracleCase{name: "shift-by of a partly committed group", groups: []string{gPartial}, scope: scopeList, target: []string{"--shift-by", "-2"}, differ: diffShiftUncommitted},
		oracleCase{name: "shift-by of a group that never committed", groups: []string{gNone}, scope: scopeList, target: []string{"--shift-by", "-2"}, differ: diffShiftUncommitted},
		oracleCase{name: "all topics of a group that never committed", groups: []string{gNone}, scope: scopeAll, target: []string{"--to-earliest"}, differ: diffNothingCommitted},
		oracleCase{name: "from-file with another group's rows", groups: []string{gFull}, target: []string{"--from-file", fileTwoGroups}, differ: diffFileOtherGroup},
		oracleCase{name: "from-file naming a partition twice", groups: []string{gFull}, target: []string{"--from-file", fileTwice}, differ: diffFileTwice},
		oracleCase{name: "from-file with --topic", groups: []string{gFull}, scope: []string{"--topic", oOOO}, target: []string{"--from-file", fileNoGroup}, differ: diffFileWithTopic},
		oracleCase{name: "a partition twice in the scope", groups: []string{gFull, gPartial}, scope: []string{"--topic", oMixed + ":0", "--topic", oMixed, "--topic", oTxn + ":0,0"}, target: []string{"--to-offset", "5"}, differ: diffScopeTwice,
			plain: []string{"--topic", oMixed, "--topic", oTxn + ":0"}},
		oracleCase{name: "to-datetime without a zone", groups: []string{gFull}, scope: scopeList, target: []string{"--to-datetime", w.t0.Add(3 * time.Second).UTC().Format("2006-01-02T15:04:05.000")}, differ: diffZonelessTime},
	)

	// Kafka's tool answers every question in one JVM, asked in turn.
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) { w.check(t, oc) })
	}
	t.Run("round trips", func(t *testing.T) { w.roundTrips(t, at(2500*time.Millisecond)) })
}

// roundTrips: the CSV each tool exports, given to the other, plans the
// same offsets; and Kafka's tool applies the runner's CSV as planned.
func (w *oracleWorld) roundTrips(t *testing.T, when string) {
	target := []string{"--to-datetime", when}
	// Not the empty partition: for it Kafka's tool prints a warning among
	// the CSV it exports, which its own --from-file then refuses, as the
	// runner does.
	scope := []string{"--topic", oMixed + ":0,2", "--topic", oOOO, "--topic", oTxn, "--topic", oCompact}
	const partitions = 5
	// Kafka's --export, to the runner's file: target.
	code, out := w.tool.run(t, append([]string{"--bootstrap-server", w.bootstrap, "--group", gFull, "--reset-offsets", "--dry-run", "--export"}, append(scope, target...)...)...)
	kafka, _, ok := w.kafkaPlans(t, oracleCase{groups: []string{gFull}, scope: scope, target: target})
	if code != 0 || !ok || len(kafka[gFull]) != partitions {
		t.Fatalf("Kafka's tool: exit %d, plan %v\n%s", code, kafka[gFull], out)
	}
	fromKafka := w.file(t, "from-kafka.csv", out)
	r, res := w.runnerPlan(t, gFull, oracleCase{target: []string{"--from-file", fromKafka}}, true)
	if res.ExitCode != report.ExitOK || !maps.Equal(r, kafka[gFull]) {
		t.Errorf("Kafka's export through the runner's --from-file: exit %d (%s)\n%s", res.ExitCode, res.Error, planDiff(kafka[gFull], r))
	}

	// The runner's --export, to Kafka's --from-file: planned, then applied
	// to a group that never committed (a group of its own, which no case
	// uses), and read back.
	const gApplied = "oracle-applied"
	for _, g := range []string{gFull, gApplied} {
		args := append([]string{"--bootstrap-servers", w.bootstrap, "--group", g, "--dry-run", "--allow-skip", "--export"}, append(scope, target...)...)
		var stdout, stderr bytes.Buffer
		if code := runner.Main(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("runner --export: exit %d\n%s", code, stderr.String())
		}
		r, _ := w.runnerPlan(t, g, oracleCase{scope: scope, target: target}, true)
		fromRunner := w.file(t, "from-runner-"+g+".csv", stdout.String())
		k, out, ok := w.kafkaPlans(t, oracleCase{groups: []string{g}, target: []string{"--from-file", fromRunner}})
		if !ok || len(r) != partitions || !maps.Equal(k[g], r) {
			t.Errorf("the runner's export through Kafka's --from-file, %s:\n%s%s", g, planDiff(k[g], r), out)
		}
		if g != gApplied {
			continue
		}
		code, out := w.tool.run(t, "--bootstrap-server", w.bootstrap, "--group", g, "--reset-offsets", "--execute", "--from-file", fromRunner)
		if code != 0 || strings.Contains(out, "Error") {
			t.Fatalf("Kafka's tool --execute: exit %d\n%s", code, out)
		}
		got := w.committedOffsets(t, g)
		if !maps.Equal(got, r) {
			t.Errorf("Kafka's tool committed the runner's CSV as\n%s", planDiff(r, got))
		}
	}
}

// committedOffsets reads a group's committed offsets with the independent
// client.
func (w *oracleWorld) committedOffsets(t *testing.T, g string) plan {
	t.Helper()
	offs, err := w.cluster.Committed(testCtx(t), g)
	if err != nil {
		t.Fatalf("fetch %s's offsets: %v", g, err)
	}
	out := plan{}
	for topic, ps := range offs {
		for p, o := range ps {
			out[tp{topic, p}] = o.Offset
		}
	}
	return out
}

// check is the one comparison: it asks both tools the case's question and
// fails on any difference but the one the case names.
func (w *oracleWorld) check(t *testing.T, oc oracleCase) {
	t.Helper()
	kafka, kafkaOut, kafkaOK := w.kafkaPlans(t, oc)
	for _, g := range oc.groups {
		r, res := w.runnerPlan(t, g, oc, true)
		want := kafka[g]
		switch oc.differ {
		case same:
			if !kafkaOK {
				t.Fatalf("Kafka's tool failed:\n%s", kafkaOut)
			}
			if res.ExitCode != report.ExitOK {
				t.Errorf("%s: the runner refused (exit %d, %s: %s) what Kafka's tool plans as %v", g, res.ExitCode, res.Reason, res.Error, want)
				continue
			}
			if !maps.Equal(r, want) {
				t.Errorf("%s: plans differ\n%s", g, planDiff(want, r))
			}
			w.checkSkipGuard(t, g, oc, want)
		case bothRefuse:
			if kafkaOK {
				t.Errorf("Kafka's tool planned %v\n%s", want, kafkaOut)
			}
			if res.ExitCode != report.ExitInvalidInput || !strings.Contains(res.Error, "does not exist") {
				t.Errorf("%s: exit %d (%s), want 2: does not exist", g, res.ExitCode, res.Error)
			}
		case diffScopeTwice:
			if kafkaOK || !strings.Contains(kafkaOut, "Duplicate key") {
				t.Errorf("Kafka's tool did not fail on the repeated partition:\n%s", kafkaOut)
			}
			plain, out, ok := w.kafkaPlans(t, oracleCase{groups: []string{g}, scope: oc.plain, target: oc.target})
			if !ok || res.ExitCode != report.ExitOK || !maps.Equal(r, plain[g]) {
				t.Errorf("%s: exit %d (%s); plans differ from Kafka's with each partition once\n%s%s", g, res.ExitCode, res.Error, planDiff(plain[g], r), out)
			}
		case diffShiftOverflow:
			// Kafka's tool lands on the log start, the runner on the log end.
			if !kafkaOK || res.ExitCode != report.ExitOK {
				t.Fatalf("exit %d (%s), Kafka's tool:\n%s", res.ExitCode, res.Error, kafkaOut)
			}
			ends := w.logEnds(t, slices.Collect(maps.Keys(want)))
			starts := w.logStarts(t, slices.Collect(maps.Keys(want)))
			for p := range want {
				if want[p] != starts[p] || r[p] != ends[p] {
					t.Errorf("%s %s: Kafka's tool %d (log start %d), runner %d (log end %d)", g, p, want[p], starts[p], r[p], ends[p])
				}
			}
		case diffShiftUncommitted:
			if kafkaOK || !strings.Contains(kafkaOut, "since there is no current committed offset") {
				t.Errorf("Kafka's tool did not refuse the shift:\n%s", kafkaOut)
			}
			committed := w.inScope(t, oc.scope, w.committed[g])
			if len(committed) == 0 {
				if res.ExitCode != report.ExitInvalidInput || !strings.Contains(res.Error, "shift: moves from the committed offset, and the group has none") {
					t.Errorf("%s: exit %d (%s), want 2: nothing to shift from", g, res.ExitCode, res.Error)
				}
				continue
			}
			// The runner plans the committed partitions as Kafka's tool
			// plans them when asked about those alone.
			var scope []string
			for p := range committed {
				scope = append(scope, "--topic", fmt.Sprintf("%s:%d", p.topic, p.partition))
			}
			alone, out, ok := w.kafkaPlans(t, oracleCase{groups: []string{g}, scope: scope, target: oc.target})
			if !ok {
				t.Fatalf("Kafka's tool on the committed partitions:\n%s", out)
			}
			if res.ExitCode != report.ExitOK || !maps.Equal(r, alone[g]) {
				t.Errorf("%s: exit %d (%s); plans differ\n%s", g, res.ExitCode, res.Error, planDiff(alone[g], r))
			}
			if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.HasPrefix(s, "no committed offset to shift from, left alone") }) {
				t.Errorf("%s: no warning names the partitions left alone: %q", g, res.Warnings)
			}
		case diffNothingCommitted:
			if !kafkaOK || len(want) != 0 {
				t.Errorf("Kafka's tool: %v\n%s", want, kafkaOut)
			}
			if res.ExitCode != report.ExitInvalidInput || !strings.Contains(res.Error, "has no committed offsets") {
				t.Errorf("%s: exit %d (%s), want 2: no committed offsets", g, res.ExitCode, res.Error)
			}
		case diffFileOtherGroup, diffFileTwice, diffFileWithTopic, diffZonelessTime:
			if !kafkaOK || len(want) == 0 {
				t.Errorf("Kafka's tool did not plan: %v\n%s", want, kafkaOut)
			}
			msg := map[difference]string{
				diffFileOtherGroup: `line 2: group "oracle-partial" is not line 1's "oracle-full": the file may hold one group's rows`,
				diffFileTwice:      "line 1 and line 2 both name mixed/0",
				diffFileWithTopic:  "conflicts with --from-file",
				diffZonelessTime:   "has no time zone",
			}[oc.differ]
			if res.ExitCode != report.ExitInvalidInput || !strings.Contains(res.Error, msg) {
				t.Errorf("%s: exit %d (%s), want 2: %s", g, res.ExitCode, res.Error, msg)
			}
		default:
			t.Fatalf("unknown difference %q", oc.differ)
		}
	}
}

// checkSkipGuard: without --allow-skip the runner refuses (exit 7,
// WouldSkipMessages) exactly the plans that move some committed partition
// ahead of its committed offset, over messages still in the log; Kafka's
// tool has no such guard. Otherwise it plans the same.
func (w *oracleWorld) checkSkipGuard(t *testing.T, g string, oc oracleCase, want plan) {
	t.Helper()
	var ahead []string
	for p, n := range want {
		prev, ok := w.committed[g][p]
		if ok && n > prev && n > w.logStart(t, p) {
			ahead = append(ahead, p.String())
		}
	}
	r, res := w.runnerPlan(t, g, oc, false)
	switch {
	case len(ahead) > 0 && res.Reason != report.ReasonWouldSkipMessages:
		t.Errorf("%s without --allow-skip: exit %d (%s), want WouldSkipMessages for %v", g, res.ExitCode, res.Reason, ahead)
	case len(ahead) == 0 && (res.ExitCode != report.ExitOK || !maps.Equal(r, want)):
		t.Errorf("%s without --allow-skip: exit %d (%s: %s), want the plan, which skips nothing\n%s", g, res.ExitCode, res.Reason, res.Error, planDiff(want, r))
	}
}

// planDiff lists the partitions on which two plans differ.
func planDiff(kafka, runner plan) string {
	var b strings.Builder
	keys := slices.Collect(maps.Keys(kafka))
	for p := range runner {
		if _, ok := kafka[p]; !ok {
			keys = append(keys, p)
		}
	}
	slices.SortFunc(keys, func(a, b tp) int { return strings.Compare(a.String(), b.String()) })
	for _, p := range keys {
		k, kok := kafka[p]
		r, rok := runner[p]
		if k != r || kok != rok {
			fmt.Fprintf(&b, "  %s: Kafka's tool %s, runner %s\n", p, orNone(k, kok), orNone(r, rok))
		}
	}
	return b.String()
}

func orNone(n int64, ok bool) string {
	if !ok {
		return "(none)"
	}
	return strconv.FormatInt(n, 10)
}

// kafkaPlans asks Kafka's tool for the case's dry-run plan of every group
// at once, as --export CSV. ok is false when the tool failed.
func (w *oracleWorld) kafkaPlans(t *testing.T, oc oracleCase) (map[string]plan, string, bool) {
	t.Helper()
	args := append([]string{"--bootstrap-server", w.bootstrap, "--reset-offsets", "--dry-run", "--export"}, oc.selectGroups...)
	for _, g := range oc.groups {
		if oc.selectGroups == nil {
			args = append(args, "--group", g)
		}
	}
	args = append(append(append(args, oc.scope...), oc.target...), oc.kafkaOnly...)
	code, out := w.tool.run(t, args...)
	plans := map[string]plan{}
	for _, g := range oc.groups {
		plans[g] = plan{}
	}
	ok := code == 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(oc.groups) == 1 {
			f = append([]string{oc.groups[0]}, f...)
		}
		if line == "" || strings.HasPrefix(line, "Warn: ") { // a time past a partition's last record
			continue
		}
		if len(f) != 4 || plans[f[0]] == nil {
			ok = false // an error, its stack trace, the usage
			continue
		}
		p, perr := strconv.ParseInt(f[2], 10, 32)
		o, oerr := strconv.ParseInt(f[3], 10, 64)
		if perr != nil || oerr != nil {
			ok = false
			continue
		}
		plans[f[0]][tp{f[1], int32(p)}] = o
	}
	return plans, out, ok
}

// runnerPlan runs the runner's dry run for one group, with the case's
// flags, and returns its plan: the partitions it would commit.
func (w *oracleWorld) runnerPlan(t *testing.T, g string, oc oracleCase, allowSkip bool) (plan, *report.Result) {
	t.Helper()
	args := []string{"--bootstrap-servers", w.bootstrap, "--group", g, "--dry-run", "--output", "json", "--timeout", "30s"}
	if allowSkip {
		args = append(args, "--allow-skip")
	}
	if !slices.Equal(oc.scope, scopeAll) {
		args = append(args, oc.scope...)
	}
	args = append(args, oc.target...)
	var stdout, stderr bytes.Buffer
	code := runner.Main(context.Background(), args, &stdout, &stderr)
	res, err := report.Decode(stdout.Bytes())
	if err != nil {
		t.Fatalf("runner %q: exit %d, no result (%v)\n%s", args, code, err, stderr.String())
	}
	out := plan{}
	for _, p := range res.Partitions {
		if p.Error == "" && p.LeftAlone == "" {
			out[tp{p.Topic, p.Partition}] = p.NewOffset
		}
	}
	if res.ExitCode != report.ExitOK {
		out = nil
	}
	return out, res
}

// inScope is the part of a group's committed offsets the scope names.
func (w *oracleWorld) inScope(t *testing.T, scope []string, committed plan) plan {
	t.Helper()
	out := plan{}
	for p, o := range committed {
		in := slices.Equal(scope, scopeAll)
		for i := 1; i < len(scope); i += 2 {
			name, parts, hasParts := strings.Cut(scope[i], ":")
			in = in || (name == p.topic && (!hasParts || slices.Contains(strings.Split(parts, ","), strconv.Itoa(int(p.partition)))))
		}
		if in {
			out[p] = o
		}
	}
	return out
}

func (w *oracleWorld) file(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// consumerGroupTool is Kafka's ConsumerGroupCommand in one JVM
// (testdata/oracle/ConsumerGroupCommandBatch.java), asked one question at
// a time.
type consumerGroupTool struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startConsumerGroupTool(t *testing.T, libs string) *consumerGroupTool {
	t.Helper()
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "oracle", "ConsumerGroupCommandBatch.java"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(libs, "*"), src)
	cmd.Stderr = os.Stderr // only the JVM's own complaints: the tool's output is captured
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Kafka's tool: %v", err)
	}
	tool := &consumerGroupTool{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		_ = in.Close() // the tool ends at the end of its input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return tool
}

// run asks the tool one question: its exit code and all it printed.
func (c *consumerGroupTool) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	for _, a := range args {
		if strings.ContainsAny(a, "\t\n") {
			t.Fatalf("argument %q cannot be passed to the tool", a)
		}
	}
	if _, err := io.WriteString(c.in, strings.Join(args, "\t")+"\n"); err != nil {
		t.Fatalf("Kafka's tool: %v", err)
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("Kafka's tool ended: %v", err)
	}
	var code, n int
	if _, err := fmt.Sscanf(header, "END %d %d\n", &code, &n); err != nil {
		t.Fatalf("Kafka's tool: unexpected %q", header)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.out, b); err != nil {
		t.Fatalf("Kafka's tool: %v", err)
	}
	return code, string(b)
}

// newOracleWorld fills the cluster: topics with awkward data, groups with
// awkward commits. It waits for the compaction it needs by asking the
// broker (never by sleeping a guessed time).
func newOracleWorld(t *testing.T, c *kafkatest.Cluster, libs string) *oracleWorld {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := &oracleWorld{cluster: c, bootstrap: c.Bootstrap(), dir: t.TempDir(), t0: time.Now().Add(-3 * time.Hour).Truncate(time.Second)}
	w.tool = startConsumerGroupTool(t, libs) // its JVM starts while the data is written
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// kafkatest creates a topic and waits until every broker knows it;
	// the compacted topic gets its settings once it exists.
	create := func(topic string, parts int32, configs map[string]*string) {
		if err := c.CreateTopic(ctx, topic, parts); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		var alter []kadm.AlterConfig
		for k, v := range configs {
			alter = append(alter, kadm.AlterConfig{Name: k, Value: v})
		}
		if len(alter) == 0 {
			return
		}
		resp, err := adm.AlterTopicConfigs(ctx, alter, topic)
		if err == nil {
			for _, r := range resp {
				err = errors.Join(err, r.Err)
			}
		}
		if err != nil {
			t.Fatalf("configure %s: %v", topic, err)
		}
	}
	produce := func(cl *kgo.Client, topic string, part int32, key string, ts time.Time) {
		r := &kgo.Record{Topic: topic, Partition: part, Timestamp: ts, Value: []byte("v")}
		if key != "" {
			r.Key = []byte(key)
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to %s/%d: %v", topic, part, err)
		}
	}
	// A partition's records: half at t0, half two hours later.
	stamp := func(i int) time.Time {
		if i >= 5 {
			return w.t0.Add(2*time.Hour + time.Duration(i)*time.Second)
		}
		return w.t0.Add(time.Duration(i) * time.Second)
	}

	create(oMixed, 3, nil)
	for i := range 10 {
		produce(cl, oMixed, 0, "", stamp(i))
		produce(cl, oMixed, 2, "", stamp(i))
	}
	if err := c.DeleteRecords(ctx, oMixed, 2, 4); err != nil {
		t.Fatalf("delete records: %v", err)
	}

	create(oOOO, 1, nil)
	for _, s := range []int{5, 1, 9, 3, 7, 2, 8, 4} {
		produce(cl, oOOO, 0, "", w.t0.Add(time.Duration(s)*time.Second))
	}

	// Transactions: three committed records, two aborted, two committed,
	// two left open (the log's end is past them, the last stable offset
	// before them); each commit or abort adds a control record.
	create(oTxn, 1, nil)
	txn, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// Open until the test ends: the broker would abort it after the
		// timeout, moving the log end between two questions. Its default
		// transaction.max.timeout.ms is 15 minutes.
		kgo.TransactionalID("oracle-txn"), kgo.TransactionTimeout(14*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(txn.Close) // after the cases: the open transaction stays open until then
	i := 0
	for _, n := range []struct {
		records int
		end     kgo.TransactionEndTry
		open    bool
	}{{3, kgo.TryCommit, false}, {2, kgo.TryAbort, false}, {2, kgo.TryCommit, false}, {2, kgo.TryAbort, true}} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range n.records {
			produce(txn, oTxn, 0, "", stamp(i))
			i++
		}
		if !n.open {
			if err := txn.EndTransaction(ctx, n.end); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Compaction: keys repeat, each batch its own segment (segment.ms
	// 1), the cleaner as eager as it gets; wait until it has removed an
	// older value, so that the offsets have holes.
	one, zero, dirty := "1", "0", "0.01"
	create(oCompact, 1, map[string]*string{"cleanup.policy": ptrTo("compact"), "segment.ms": &one, "min.compaction.lag.ms": &zero, "min.cleanable.dirty.ratio": &dirty})
	if resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.cleaner.backoff.ms", Value: ptrTo("200")}}); err != nil || len(resp) == 0 || resp[0].Err != nil {
		t.Logf("cannot make the log cleaner eager (%v %v); compaction may take the default 15 s", err, resp)
	}
	for i := range 10 {
		produce(cl, oCompact, 0, "k"+strconv.Itoa(i%3), stamp(i))
	}
	w.awaitCompaction(ctx, t, cl)
	// Then no more cleaning: a cleaner pass between the two tools'
	// answers (a time's offset that a later value of its key replaced)
	// would be a difference of the test's making. The holes stay.
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: ptrTo("delete")}}, oCompact)
	if err == nil && len(resp) > 0 {
		err = resp[0].Err
	}
	if err != nil {
		t.Fatalf("stop compacting %s: %v", oCompact, err)
	}

	w.committed = map[string]plan{
		gFull: {
			{oMixed, 0}:   50, // above the log end, 10
			{oMixed, 1}:   0,  // an empty partition
			{oMixed, 2}:   1,  // below the log start, 4
			{oOOO, 0}:     3,
			{oTxn, 0}:     8,
			{oCompact, 0}: 4,
		},
		gPartial: {{oMixed, 0}: 5, {oOOO, 0}: 6},
	}
	for g, offs := range w.committed {
		commit := kafkatest.Offsets{}
		for p, o := range offs {
			if commit[p.topic] == nil {
				commit[p.topic] = map[int32]int64{}
			}
			commit[p.topic][p.partition] = o
		}
		if err := c.Commit(ctx, g, commit, ""); err != nil {
			t.Fatalf("commit %s: %v", g, err)
		}
	}
	return w
}

func ptrTo[T any](v T) *T { return &v }

// awaitCompaction waits until the compacted topic's first readable record
// is not at offset 0: the cleaner has removed at least the oldest value
// of a repeated key.
func (w *oracleWorld) awaitCompaction(ctx context.Context, t *testing.T, cl *kgo.Client) {
	t.Helper()
	for {
		rd, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{oCompact: {0: kgo.NewOffset().At(0)}}))
		if err != nil {
			t.Fatal(err)
		}
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := rd.PollRecords(fctx, 1)
		cancel()
		rd.Close()
		var first int64 = -1
		fs.EachRecord(func(r *kgo.Record) {
			if first < 0 {
				first = r.Offset
			}
		})
		if first > 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the compacted topic was never compacted: %v", ctx.Err())
		}
		// Another record rolls the active segment, which the cleaner
		// never touches.
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: oCompact, Partition: 0, Key: []byte("k-roll"), Value: []byte("v"), Timestamp: w.t0.Add(2*time.Hour + 30*time.Second)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// logStart, logStarts and logEnds ask the broker, with the independent
// client, for partitions' bounds.
func (w *oracleWorld) logStart(t *testing.T, p tp) int64 { return w.logStarts(t, []tp{p})[p] }

func (w *oracleWorld) logStarts(t *testing.T, ps []tp) plan { return w.listOffsets(t, ps, true) }

func (w *oracleWorld) logEnds(t *testing.T, ps []tp) plan { return w.listOffsets(t, ps, false) }

func (w *oracleWorld) listOffsets(t *testing.T, ps []tp, start bool) plan {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(w.bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var topics []string
	for _, p := range ps {
		topics = append(topics, p.topic)
	}
	list := adm.ListEndOffsets
	if start {
		list = adm.ListStartOffsets
	}
	resp, err := list(testCtx(t), topics...)
	if err != nil {
		t.Fatal(err)
	}
	out := plan{}
	for _, p := range ps {
		o, ok := resp.Lookup(p.topic, p.partition)
		if !ok || o.Err != nil {
			t.Fatalf("list offsets of %s: %v", p, o.Err)
		}
		out[p] = o.Offset
	}
	return out
}
