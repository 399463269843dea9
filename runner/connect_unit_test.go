package runner

import (
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

func TestConnectCause(t *testing.T) {
	tests := []struct {
		name      string
		code      kafka.ErrorCode
		msg       string
		ok        bool
		retryable bool
		hint      string
	}{
		{"refused", kafka.ErrTransport, "k:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)", true, true, "Kafka is down, or the port is wrong"},
		{"no such name", kafka.ErrResolve, "k.invalid:9092/bootstrap: Failed to resolve 'k.invalid:9092': Name or service not known", true, false, "does not resolve"},
		{"resolver down for now", kafka.ErrResolve, "k:9092/bootstrap: Failed to resolve 'k:9092': Temporary failure in name resolution", true, true, "for now"},
		{"certificate not trusted", kafka.ErrSsl, "ssl://k:9093/bootstrap: SSL handshake failed: certificate verify failed", true, false, "the TLS handshake failed"},
		{"a later attempt's report of a failed handshake", kafka.ErrTransport, "ssl://k:9093/bootstrap: error:0A000086:SSL routines::certificate verify failed (after 0ms in state SSL_HANDSHAKE)", true, false, "the TLS handshake failed"},
		{"plaintext at a TLS listener", kafka.ErrTransport, "k:9093/bootstrap: Disconnected while requesting ApiVersion: might be caused by incorrect security.protocol configuration (connecting to a SSL listener?)", true, true, "check security.protocol"},
		{"other transport failure", kafka.ErrTransport, "k:9092/bootstrap: Connect to ipv4#10.0.0.1:9092 failed: Connection timed out", true, true, "reachable from here"},
		{"not about connecting", kafka.ErrTimedOut, "Local: Timed out", false, false, ""},
		{"refused credentials are auth's", kafka.ErrAuthentication, "SASL authentication error", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, hint, ok := connectCause(tt.code, tt.msg)
			if ok != tt.ok || r != tt.retryable || !strings.Contains(config.FieldNamesFlags.Expand(hint), tt.hint) {
				t.Errorf("connectCause = %v, %q, %v; want %v, …%q…, %v", r, hint, ok, tt.retryable, tt.hint, tt.ok)
			}
		})
	}
}

func TestUnreachableIsRetryableIfAnyBrokerMayComeBack(t *testing.T) {
	typo := connectFailure{kafka.ErrResolve, "a:1/bootstrap: Failed to resolve 'a:1': Name or service not known"}
	down := connectFailure{kafka.ErrTransport, "b:1/bootstrap: Connect to ipv4#10.0.0.2:1 failed: Connection refused"}
	tls := connectFailure{kafka.ErrSsl, "ssl://c:1/bootstrap: SSL handshake failed"}
	tests := []struct {
		causes    []connectFailure
		retryable bool
		hint      string
	}{
		{[]connectFailure{typo}, false, "does not resolve"},
		{[]connectFailure{typo, down}, true, "Kafka is down"},
		{[]connectFailure{down, typo}, true, "Kafka is down"},
		{[]connectFailure{typo, tls}, false, "does not resolve"},
	}
	for _, tt := range tests {
		e := unreachable(tt.causes)
		if e.retryable != tt.retryable || !strings.Contains(e.hint, tt.hint) {
			t.Errorf("%v: retryable %v hint %q, want %v …%q…", tt.causes, e.retryable, e.hint, tt.retryable, tt.hint)
		}
		for _, c := range tt.causes {
			if !strings.Contains(e.Error(), c.msg) {
				t.Errorf("%q does not say %q", e.Error(), c.msg)
			}
		}
	}
}

func TestConnectWatch(t *testing.T) {
	refused := func(broker string) kafka.Error {
		return kafka.NewError(kafka.ErrTransport, broker+"/bootstrap: Connect to "+broker+" failed: Connection refused", false)
	}
	allDown := kafka.NewError(kafka.ErrAllBrokersDown, "2/2 brokers are down", false)

	var w connectWatch
	if w.observe(allDown) != nil {
		t.Error("all brokers down with no cause known ended the run")
	}
	for _, e := range []kafka.Error{refused("a:1"), refused("b:1"), refused("a:1")} {
		if w.observe(e) != nil {
			t.Errorf("%v alone ended the run: only all brokers down does", e)
		}
	}
	if w.observe(kafka.NewError(kafka.ErrTimedOut, "Local: Timed out", false)) != nil {
		t.Error("a timeout ended the run")
	}
	u := w.observe(allDown)
	if u == nil {
		t.Fatal("all brokers down after their failures did not end the run")
	}
	if len(u.causes) != 2 || !u.retryable {
		t.Errorf("causes %v (one per broker, the latest), retryable %v", u.causes, u.retryable)
	}

	// Once Kafka has answered, brokers going away are the retries' to handle.
	var answered connectWatch
	answered.answer()
	if answered.observe(refused("a:1")) != nil {
		t.Error("a broker failing after Kafka answered ended the run")
	}
	if answered.observe(allDown) != nil {
		t.Error("brokers down after Kafka answered ended the run")
	}
}
