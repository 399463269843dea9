package runner_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestSASLOnApacheKafka: on Apache Kafka 4.4 with a SASL_PLAINTEXT
// listener, PLAIN users in its JAAS configuration and SCRAM users made with
// Kafka's own kafka-configs, the runner's two clients (librdkafka, and
// franz-go for the group's kind and for share groups) authenticate with the
// same librdkafka properties: a share group's start offsets are reset, and
// the kind check sees the share group through SASL (librdkafka sees none);
// a wrong password ends the run with exit 2 and changes nothing. kfake's
// SASL is TestSASLThroughConfigDirectory's.
func TestSASLOnApacheKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	libs := os.Getenv(kafkatest.ApacheEnv)
	if libs == "" {
		t.Skip("needs Apache Kafka: " + kafkatest.ApacheEnv + " (make test-runner-apache)")
	}
	const plainUser = "replay-plain"
	c := kafkatest.NewWith(t, kafkatest.Options{Apache: &kafkatest.ApacheOptions{
		Libs: libs, Nodes: 1, SASL: &kafkatest.SASLOptions{Plain: map[string]string{plainUser: canary}},
	}})
	ctx := testCtx(t)
	users := map[string]string{"PLAIN": plainUser}
	for _, m := range []string{kafkatest.SCRAMSHA256, kafkatest.SCRAMSHA512} {
		users[m] = "replay-" + strings.ToLower(m)
		if err := c.Apache.AddSCRAMUser(ctx, m, users[m], canary); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Seed(ctx, topic, partitions, records, base, 1e9); err != nil {
		t.Fatal(err)
	}
	g := "share-sasl"
	member, err := c.JoinShare(ctx, g, g+"-worker", topic)
	if err != nil {
		t.Fatal(err)
	}
	member.Leave()
	starts := func(t *testing.T) map[string]int64 { t.Helper(); return startOffsetsOf(t, c, g) }
	bootstrap := strings.Join(c.Apache.SASLBootstrap(), ",")
	for i, mech := range []string{"PLAIN", kafkatest.SCRAMSHA256, kafkatest.SCRAMSHA512} {
		t.Run(mech, func(t *testing.T) {
			props := map[string]string{
				"security.protocol": "SASL_PLAINTEXT",
				"sasl.mechanism":    mech,
				"sasl.username":     users[mech],
				"sasl.password":     canary,
			}
			want := int64(10 * (i + 1))
			o := runProcessAt(t, bootstrap, props, "--group", g, "--topic", topic, "--to", fmt.Sprintf("offset:%d", want), "--allow-skip", "--group-type", "Share")
			if o.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", o.code, o.result, o.stderr)
			}
			got := starts(t)
			for p := 0; p < partitions; p++ {
				if k := fmt.Sprintf("%s/%d", topic, p); got[k] != want {
					t.Errorf("%s: start offset %d, want %d (all: %v)", k, got[k], want, got)
				}
			}
			// The kind check answers through SASL: stated Streams, the
			// group is found to be a share group, which librdkafka would
			// describe as no group at all.
			o = runProcessAt(t, bootstrap, props, "--group", g, "--topic", topic, "--to", "earliest", "--group-type", "Streams")
			if o.code != int(report.ExitInvalidInput) || !strings.Contains(o.result, string(report.ReasonUnsupportedGroupKind)) || !strings.Contains(o.result, "is a Share group") {
				t.Errorf("stated Streams: exit %d, want %d %s naming the share group\n%s", o.code, report.ExitInvalidInput, report.ReasonUnsupportedGroupKind, o.result)
			}
			// A wrong password: exit 2, refused credentials, nothing moved.
			wrong := map[string]string{}
			for k, v := range props {
				wrong[k] = v
			}
			wrong["sasl.password"] = "WRONG-" + canary
			o = runProcessAt(t, bootstrap, wrong, "--group", g, "--topic", topic, "--to", "earliest")
			if o.code != int(report.ExitInvalidInput) || !strings.Contains(o.result, "authentication failed") {
				t.Errorf("wrong password: exit %d, want %d saying authentication failed\n%s\n%s", o.code, report.ExitInvalidInput, o.result, o.stderr)
			}
			if after := starts(t); !equalMaps(after, got) {
				t.Errorf("a refused run moved the start offsets: %v → %v", got, after)
			}
			if strings.Contains(o.all(), canary) {
				t.Fatalf("a password appears in the runner's output:\n%s", o.all())
			}
		})
	}
}
