package runner

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// nastySecrets are values that byte-level redaction of an encoded result
// turns into an undecodable document: words and digits of the result
// itself, JSON syntax, and escapes.
var nastySecrets = []string{
	"kafka", "2026", "schema", "Applied", "partitions", "kafkareplay.dev/result/v1", "true", "null", "0000",
	`"}],`, `\\\\`, "::::", `","x":"`, "\"\n\"}", "T09:", "exitCode",
}

func sampleResult(secret string) *report.Result {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	prev, delta := int64(2026), int64(1)
	return &report.Result{
		Schema: report.Schema, Group: "kafka-billing", RunID: "ns/kafka/0123456789abcdef",
		Target:   report.Target{Given: "earliest", Resolved: "earliest"},
		ExitCode: report.ExitPartiallyApplied, Reason: report.ReasonPartiallyApplied,
		Partitions: []report.Partition{
			{Topic: "kafka.events", Partition: 0, PreviousOffset: &prev, NewOffset: 2025, Delta: &delta, Note: "note quoting " + secret},
			{Topic: "kafka.events", Partition: 1, NewOffset: 7, Error: "commit failed: broker said " + secret},
		},
		Warnings:  []string{"warning with " + secret + " inside"},
		StartedAt: start, FinishedAt: start.Add(time.Second),
		Error: "SASL authentication failed for password " + secret,
	}
}

// TestRedactResultKeepsTheResultDecodable: whatever the secret, the result
// still decodes, its identifiers, numbers and times are intact, and the
// secret is gone from every free-text field.
func TestRedactResultKeepsTheResultDecodable(t *testing.T) {
	for _, secret := range nastySecrets {
		t.Run(secret, func(t *testing.T) {
			red := config.Properties{"sasl.password": secret}.Redactor()
			res := sampleResult(secret)
			want := sampleResult(secret)
			redactResult(res, red)
			b, err := report.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got, err := report.Decode(b)
			if err != nil {
				t.Fatalf("the redacted result does not decode: %v\n%s", err, b)
			}
			if got.Schema != report.Schema || got.Reason != want.Reason || got.Group != want.Group || got.RunID != want.RunID || got.Partitions[0].Topic != want.Partitions[0].Topic {
				t.Errorf("identifiers changed: %+v", got)
			}
			if !got.StartedAt.Equal(want.StartedAt) || *got.Partitions[0].PreviousOffset != 2026 || got.Partitions[0].NewOffset != 2025 {
				t.Errorf("times or numbers changed: %+v", got)
			}
			for _, s := range []string{got.Error, got.Warnings[0], got.Partitions[0].Note, got.Partitions[1].Error} {
				if strings.TrimSpace(secret) != "" && strings.Contains(s, secret) {
					t.Errorf("%q still holds the secret", s)
				}
				if !strings.Contains(s, "[redacted]") {
					t.Errorf("%q was not redacted", s)
				}
			}
			// The compact form, for the termination message, too.
			c, err := report.Compact(res, report.MaxTerminationMessageBytes)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := report.Decode(c); err != nil {
				t.Fatalf("the compact result does not decode: %v\n%s", err, c)
			}
		})
	}
}

// TestRedactingHandler: log records lose secret values from the message and
// every attribute, and the formatted line keeps its structure even when the
// secret is one of its keys or levels.
func TestRedactingHandler(t *testing.T) {
	for _, secret := range []string{"level", "INFO", "msg=", "CANARY-s3cr3t"} {
		t.Run(secret, func(t *testing.T) {
			var buf bytes.Buffer
			red := config.Properties{"sasl.password": secret}.Redactor()
			log := slog.New(newRedactingHandler(slog.NewTextHandler(&buf, nil), red))
			log = log.With("with", "pre "+secret)
			log.Info("message "+secret, "str", secret, "err", errors.New("e "+secret), "n", 42,
				slog.Group("g", slog.String("inner", secret+" x")))
			line := buf.String()
			if !strings.HasPrefix(line, "time=") || !strings.Contains(line, " level=INFO msg=") {
				t.Errorf("line structure lost: %s", line)
			}
			for _, k := range []string{"with=", "str=", "err=", "n=42", "g.inner="} {
				if !strings.Contains(line, k) {
					t.Errorf("line lacks %s: %s", k, line)
				}
			}
			// Everything after the fixed prefix is values from the run.
			_, rest, _ := strings.Cut(line, " msg=")
			if strings.Contains(rest, secret) {
				t.Errorf("secret left in %s", rest)
			}
		})
	}
}

// TestRedactingHandlerWithoutSecrets passes records through unchanged.
func TestRedactingHandlerWithoutSecrets(t *testing.T) {
	h := slog.NewTextHandler(&bytes.Buffer{}, nil)
	if got := newRedactingHandler(h, nil); got != slog.Handler(h) {
		t.Errorf("no redactor: handler wrapped anyway")
	}
}
