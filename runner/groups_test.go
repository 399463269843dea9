package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// inspect runs the runner's --list or --describe against c.
func inspect(t *testing.T, c *kafkatest.Cluster, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--bootstrap-server", c.Bootstrap(), "--timeout", "30s"}, args...)
	code := runner.Main(testCtx(t), full, &out, &errOut)
	return code, out.String(), errOut.String()
}

func inspectJSON(t *testing.T, c *kafkatest.Cluster, args ...string) report.Groups {
	t.Helper()
	code, out, errOut := inspect(t, c, append(args, "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	g, err := report.DecodeGroups([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return g
}

// TestDescribeGroups: a group with a live member and one of commits alone,
// described; every partition's lag is its log end less its commit, and
// the member is named with its client ID and host.
func TestDescribeGroups(t *testing.T) {
	c := seeded(t)
	ctx := testCtx(t)
	commitAll(t, c, "live", topic, partitions, 30) // before it has members, which would refuse an admin commit
	m, err := c.Join(ctx, "live", "live-client", topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Leave)

	g := inspectJSON(t, c, "--describe", "--group", group, "--group", "live", "--group", "never-was")
	if !g.Describe || len(g.Groups) != 3 {
		t.Fatalf("want three described groups, got %+v", g)
	}
	billing, live, never := g.Groups[0], g.Groups[1], g.Groups[2]
	if billing.Group != group || billing.State != "Empty" || billing.MemberCount != 0 || billing.GroupType != "Classic" {
		t.Errorf("billing: %+v", billing)
	}
	if never.State != "Dead" || never.MemberCount != 0 || len(never.Partitions) != 0 {
		t.Errorf("a group that never was: %+v", never)
	}
	if live.State != "Stable" || live.MemberCount != 1 || len(live.Members) != 1 || live.Members[0].ClientID != "live-client" || live.Members[0].Host == "" || live.Members[0].Partitions != partitions {
		t.Errorf("live: %+v", live)
	}
	for _, gr := range []struct {
		g    report.Group
		at   int64
		live bool
	}{{billing, committed, false}, {live, 30, true}} {
		if strings.Join(gr.g.Topics, ",") != topic || len(gr.g.Partitions) != partitions {
			t.Errorf("%s: topics %v, %d partitions; want %s, %d", gr.g.Group, gr.g.Topics, len(gr.g.Partitions), topic, partitions)
			continue
		}
		for i, p := range gr.g.Partitions {
			if p.Partition != int32(i) || p.CurrentOffset == nil || *p.CurrentOffset != gr.at || p.LogEndOffset == nil || *p.LogEndOffset != records || p.Lag == nil || *p.Lag != records-gr.at {
				t.Errorf("%s partition %d: %s", gr.g.Group, i, show(p))
			}
			if (p.ClientID == "live-client") != gr.live {
				t.Errorf("%s partition %d: member %q", gr.g.Group, i, p.ClientID)
			}
		}
	}

	// The table, as Kafka's tool prints it.
	code, out, errOut := inspect(t, c, "--describe", "--group", "live")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "GROUP  TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG") || !strings.Contains(out, "live-client") {
		t.Errorf("table:\n%s", out)
	}
}

func show(p report.GroupPartition) string {
	n := func(v *int64) string {
		if v == nil {
			return "nil"
		}
		return strconv.FormatInt(*v, 10)
	}
	return fmt.Sprintf("current %s end %s lag %s member %q", n(p.CurrentOffset), n(p.LogEndOffset), n(p.Lag), p.ClientID)
}

// TestListGroups lists every group with its kind, state, member count and
// topics in one call, and the number of Kafka requests does not grow with
// the partitions or the groups.
func TestListGroups(t *testing.T) {
	c := seeded(t)
	c.RequireFake(t)
	ctx := testCtx(t)
	if err := c.Seed(ctx, "payments", 2, 5, base, 1); err != nil {
		t.Fatal(err)
	}
	commitAll(t, c, "payments-audit", "payments", 2, 1)
	m, err := c.Join(ctx, "live", "live-client", "payments")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Leave)

	g := inspectJSON(t, c, "--list")
	want := map[string]string{
		group:            "Classic Empty 0 orders",
		"payments-audit": "Classic Empty 0 payments",
		"live":           "Classic Stable 1 payments",
	}
	for name, w := range want {
		got, ok := g.Find(name)
		if !ok {
			t.Errorf("%s not listed: %+v", name, g)
			continue
		}
		if s := fmt.Sprintf("%s %s %d %s", got.GroupType, got.State, got.MemberCount, strings.Join(got.Topics, ",")); s != w {
			t.Errorf("%s: %s, want %s", name, s, w)
		}
		if got.Partitions != nil || got.Members != nil {
			t.Errorf("%s: a list carries no partitions or members: %+v", name, got)
		}
	}

	// Requests: the same group and offset requests for 3 groups of 6
	// partitions as for 6 groups of 70; the client's own connection
	// requests (ApiVersions, a Metadata refresh) vary by one or two with
	// the order it meets the brokers in, and stay few.
	// Each is counted twice and the smaller count of each kind kept: a run
	// may retry a request once that kfake answered with a transient error
	// (CI saw 4 ListOffsets for 6 partitions on 3 brokers, once), which
	// says nothing about growth: a count that grows with the partitions
	// grows in both runs.
	count := func(args ...string) kafkatest.RequestCounts {
		var least kafkatest.RequestCounts
		for range 2 {
			c.ResetRequests()
			inspectJSON(t, c, args...)
			got := c.Requests()
			if least == nil {
				least = got
				continue
			}
			for kind, n := range least {
				least[kind] = min(n, got[kind])
			}
		}
		return least
	}
	smallList, smallDescribe := count("--list"), count("--describe", "--all-groups")
	if err := c.Seed(ctx, "wide", 64, 1, base, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		commitAll(t, c, fmt.Sprintf("wide-%d", i), "wide", 64, 0)
	}
	bigList, bigDescribe := count("--list"), count("--describe", "--all-groups")
	for _, k := range []struct {
		name       string
		small, big kafkatest.RequestCounts
	}{{"list", smallList, bigList}, {"describe", smallDescribe, bigDescribe}} {
		// ListOffsets goes to each partition's leader: as many requests as
		// leaders, which 6 partitions on 3 brokers may not all have (kfake
		// places leaders at random: 2 or 3), nor ever more than the brokers.
		if n := k.big["ListOffsets"]; n > 3 || k.small["ListOffsets"] > 3 {
			t.Errorf("%s: ListOffsets %d times with 6 groups and 70 partitions, %d with 3 groups and 6 partitions; want at most one per broker (3)", k.name, n, k.small["ListOffsets"])
		}
		for _, kind := range []string{"ListGroups", "DescribeGroups", "OffsetFetch", "FindCoordinator"} {
			if k.big[kind] != k.small[kind] {
				t.Errorf("%s: %s %d times with 6 groups and 70 partitions, %d with 3 groups and 6 partitions (%s; %s)", k.name, kind, k.big[kind], k.small[kind], k.big, k.small)
			}
		}
		if conn := k.big["ApiVersions"] + k.big["Metadata"]; conn > 12 {
			t.Errorf("%s: %d connection requests (%s); want at most 12 for 3 brokers", k.name, conn, k.big)
		}
	}
	t.Logf("list: %s; describe: %s", bigList, bigDescribe)
}

// TestInspectNeverCommits: a describe reads and writes no offsets: the
// commits are what they were, and no OffsetCommit was sent.
func TestInspectNeverCommits(t *testing.T) {
	c := seeded(t)
	c.RequireFake(t)
	c.ResetRequests()
	inspectJSON(t, c, "--describe", "--all-groups")
	inspectJSON(t, c, "--list")
	for k := range c.Requests() {
		switch k {
		case "OffsetCommit", "TxnOffsetCommit", "OffsetDelete", "DeleteGroups", "JoinGroup", "ConsumerGroupHeartbeat":
			t.Errorf("a listing sent %s", k)
		}
	}
	assertUnchanged(t, c)
}

// TestInspectInvalidInput: every bad combination exits 2, names the flag,
// and asks Kafka nothing.
func TestInspectInvalidInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--list", "--describe"}, "--list (REPLAY_LIST): conflicts with --describe"},
		{[]string{"--list", "--group", "x"}, "--list (REPLAY_LIST): lists every group"},
		{[]string{"--describe"}, "--group: --describe needs --group"},
		{[]string{"--describe", "--group", "x", "--all-groups"}, "--all-groups: conflicts with --group"},
		{[]string{"--describe", "--all-groups", "--to", "earliest"}, "flag provided but not defined: -to"},
		{[]string{"--list", "--output", "csv"}, "--output (REPLAY_OUTPUT)"},
		{[]string{"--list", "--bootstrap-server", ""}, "--bootstrap-servers (REPLAY_BOOTSTRAP_SERVERS): is required"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "bootstrap") {
				args = append([]string{"--bootstrap-server", "127.0.0.1:1"}, args...)
			}
			code := runner.Main(context.Background(), args, &out, &errOut)
			if code != int(report.ExitInvalidInput) || !strings.Contains(errOut.String(), tc.want) || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %s; want exit 2 naming %q", code, out.String(), errOut.String(), tc.want)
			}
		})
	}
}

// TestInspectRedactsCredentials: a SASL password from the secret directory
// appears nowhere in what a failed listing prints.
func TestInspectRedactsCredentials(t *testing.T) {
	dir := t.TempDir()
	const secret = "s3cr3t-Pa55word"
	for k, v := range map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": secret, "bootstrap.servers": "127.0.0.1:1"} {
		if err := os.WriteFile(dir+"/"+k, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	code := runner.Main(context.Background(), []string{"--list", "--bootstrap-server", "127.0.0.1:1", "--kafka-secret-dir", dir, "--timeout", "2s"}, &out, &errOut)
	if code != int(report.ExitKafkaError) {
		t.Errorf("exit %d, want 4 (nothing listens there)\n%s", code, errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), secret) {
		t.Errorf("the password was printed:\n%s%s", out.String(), errOut.String())
	}
}

// consumerGroupCommand is kafka-consumer-groups.sh's class.
const consumerGroupCommand = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

// TestDescribeAgreesWithKafkasTool asks kafka-consumer-groups.sh
// --describe (Kafka 4.4) and the runner's --describe about the same
// groups: an empty one, one with a classic member and one with a KIP-848
// member. Every row must agree: committed offset, log end, lag, and the
// member's ID, host and client ID; and --list must name the same groups.
func TestDescribeAgreesWithKafkasTool(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's tools (" + kafkatest.ApacheEnv + ")")
	}
	c := seeded(t)
	ctx := testCtx(t)
	commitAll(t, c, "classic-live", topic, partitions, 40)
	for _, o := range []kafkatest.JoinOptions{
		{Group: "classic-live", ClientID: "classic-client", Topics: []string{topic}},
		{Group: "consumer-live", ClientID: "consumer-client", Topics: []string{topic}, Protocol: kafkatest.ProtocolConsumer},
	} {
		m, err := c.JoinWith(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Leave)
	}
	groups := []string{group, "classic-live", "consumer-live"}
	args := []string{"--describe"}
	for _, g := range groups {
		args = append(args, "--group", g)
	}
	got := inspectJSON(t, c, args...)
	for _, g := range groups {
		code, out := groupTool(t, libs, consumerGroupCommand, "--bootstrap-server", c.Bootstrap(), "--describe", "--group", g)
		if code != 0 {
			t.Fatalf("Kafka's tool on %s: exit %d\n%s", g, code, out)
		}
		want := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 9 && f[0] == g {
				want[f[1]+"/"+f[2]] = strings.Join(f[3:], " ")
			}
		}
		mine, _ := got.Find(g)
		have := map[string]string{}
		for _, p := range mine.Partitions {
			have[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = strings.Join([]string{num(p.CurrentOffset), num(p.LogEndOffset), num(p.Lag), dash(p.MemberID), dash(p.Host), dash(p.ClientID)}, " ")
		}
		if fmt.Sprint(have) != fmt.Sprint(want) || len(want) == 0 {
			t.Errorf("%s:\n runner: %v\n Kafka:  %v\n%s", g, have, want, out)
		}
	}
	code, out := groupTool(t, libs, consumerGroupCommand, "--bootstrap-server", c.Bootstrap(), "--list")
	if code != 0 {
		t.Fatalf("Kafka's tool --list: exit %d\n%s", code, out)
	}
	listed := inspectJSON(t, c, "--list")
	var mine []string
	for _, g := range listed.Groups {
		mine = append(mine, g.Group)
	}
	if kafka := strings.Fields(out); strings.Join(mine, " ") != strings.Join(sortedCopy(kafka), " ") {
		t.Errorf("--list: runner %v, Kafka %v", mine, kafka)
	}
}

func num(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestListByEnvironment: a launcher-made Job runs the list with no
// argument (the chart's policy allows environment variables only):
// REPLAY_LIST and the connection's REPLAY_* variables, the listing in the
// result file and the termination message as a run writes its result.
// Committed names the topics a group has commits on, and only those: a
// member's assignment is not a commit (a selector's withOffsetsOn).
func TestListByEnvironment(t *testing.T) {
	c := seeded(t)
	ctx := testCtx(t)
	if err := c.Seed(ctx, "payments", 2, 5, base, 1); err != nil {
		t.Fatal(err)
	}
	commitAll(t, c, "payments-audit", "payments", 2, 1)
	m, err := c.Join(ctx, "live", "live-client", "payments")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Leave)

	dir := t.TempDir()
	resultFile, termFile := dir+"/result.json", dir+"/termination-log"
	t.Setenv("REPLAY_LIST", "true")
	t.Setenv("REPLAY_BOOTSTRAP_SERVERS", c.Bootstrap())
	t.Setenv("REPLAY_RESULT_FILE", resultFile)
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", termFile)
	t.Setenv("REPLAY_FIELD_NAMES", "spec")
	var out, errOut bytes.Buffer
	if code := runner.Main(ctx, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	for _, place := range []string{resultFile, termFile} {
		b, err := os.ReadFile(place)
		if err != nil {
			t.Fatal(err)
		}
		g, err := report.DecodeGroups(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", place, err, b)
		}
		if g.Describe || g.Omitted != 0 {
			t.Errorf("%s: describe %v, omitted %d; want a whole list", place, g.Describe, g.Omitted)
		}
		for name, want := range map[string]string{group: "orders / orders", "payments-audit": "payments / payments", "live": "payments / "} {
			got, ok := g.Find(name)
			if !ok {
				t.Errorf("%s: %s not listed", place, name)
				continue
			}
			if s := strings.Join(got.Topics, ",") + " / " + strings.Join(got.Committed, ","); s != want {
				t.Errorf("%s: %s topics / committed %q, want %q", place, name, s, want)
			}
		}
	}
}

// TestListByEnvironmentInvalid: a REPLAY_LIST that is no boolean is
// refused by its name, never ignored into a run; REPLAY_LIST=false is a
// run (which then wants its group); a list with a run's argument is
// refused. Each exits 2 and writes no listing.
func TestListByEnvironmentInvalid(t *testing.T) {
	for _, tc := range []struct {
		env, want string
		args      []string
	}{
		{"maybe", `--list (REPLAY_LIST): \"maybe\" is not a valid bool`, nil},
		{"false", "REPLAY_GROUP", nil},
		{"1", "flag provided but not defined: -to", []string{"--to", "earliest"}},
		{"true", "--list (REPLAY_LIST): conflicts with --describe", []string{"--describe"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("REPLAY_LIST", tc.env)
			t.Setenv("REPLAY_BOOTSTRAP_SERVERS", "127.0.0.1:1")
			t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", dir+"/termination-log")
			var out, errOut bytes.Buffer
			code := runner.Main(context.Background(), tc.args, &out, &errOut)
			if code != int(report.ExitInvalidInput) || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %s; want exit 2 naming %q", code, errOut.String(), tc.want)
			}
			if b, err := os.ReadFile(dir + "/termination-log"); err == nil && bytes.Contains(b, []byte(report.GroupsSchema)) {
				t.Errorf("a refused list wrote a listing: %s", b)
			}
		})
	}
}
