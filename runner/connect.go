package runner

import (
	"strings"
	"sync"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// A Kafka that cannot be reached at all is known within seconds: librdkafka
// reports each failed connection as an error event (a refused connection, a
// name that does not resolve, a failed TLS handshake) and then that every
// broker is down, while the request waiting on them only times out, with
// "Local: Timed out", when --timeout has run out. The runner ends the run at
// the first "all brokers down" that comes before it has had any answer from
// Kafka, with the connections' own causes. Once Kafka has answered, a broker
// that goes away is left to the retries: it is likely a restart, and a
// commit in flight must be read back, not abandoned.

// connectFailure is one broker connection's failure, as librdkafka reported
// it.
type connectFailure struct {
	code kafka.ErrorCode
	msg  string
}

// unreachableError is Kafka never having been reached: every bootstrap
// broker failed to connect. Retryable says whether trying again later can
// help (a broker that is down) or not (a name that does not exist, a TLS
// configuration the brokers do not accept).
type unreachableError struct {
	causes    []connectFailure
	retryable bool
	hint      string
}

func (e *unreachableError) Error() string {
	msgs := make([]string, len(e.causes))
	for i, c := range e.causes {
		msgs[i] = c.msg
	}
	return "cannot connect to Kafka: " + strings.Join(msgs, "; ") + " (" + e.hint + ")"
}

// connectCause classifies one connection failure: whether a retry can help,
// and what to check. ok is false for an error that is not about connecting.
func connectCause(code kafka.ErrorCode, msg string) (retryable bool, hint string, ok bool) {
	lower := strings.ToLower(msg)
	if code == kafka.ErrTransport && (strings.Contains(lower, "ssl routines") || strings.Contains(lower, "ssl_handshake")) {
		// A later attempt's report of the same failed handshake.
		code = kafka.ErrSsl
	}
	switch code {
	case kafka.ErrResolve:
		// A temporary resolver failure (EAI_AGAIN) may pass; a name the
		// resolver says does not exist will not.
		if strings.Contains(lower, "temporary failure") || strings.Contains(lower, "try again") {
			return true, "name resolution failed for now; check the cluster's DNS", true
		}
		return false, "the host name does not resolve; check " + config.Ref(config.FlagBootstrapServers), true
	case kafka.ErrSsl:
		return false, "the TLS handshake failed; check security.protocol and the CA (ssl.ca.pem or ssl.ca.location) in " + config.Ref(config.FlagKafkaConfigDir) + ", and the client certificate and key (ssl.certificate.pem, ssl.key.pem), which are credentials, in " + config.Ref(config.FlagKafkaSecretDir), true
	case kafka.ErrTransport:
		switch {
		case strings.Contains(lower, "security.protocol"):
			// librdkafka's guess for any connection closed before the
			// first answer: a plaintext client at a TLS listener, but
			// just as well a broker or proxy resetting connections. Which
			// one cannot be told apart, so a retry is not ruled out.
			return true, "the brokers closed the connection before answering; if they expect TLS or SASL, check security.protocol in " + config.Ref(config.FlagKafkaConfigDir), true
		case strings.Contains(lower, "connection refused"):
			return true, "nothing accepts connections there: Kafka is down, or the port is wrong; check " + config.Ref(config.FlagBootstrapServers), true
		}
		return true, "check that the brokers are up and reachable from here, and " + config.Ref(config.FlagBootstrapServers), true
	}
	return false, "", false
}

// unreachable decides what a set of connection failures says about Kafka:
// retryable unless every broker failed in a way a retry cannot fix. The
// hint is that of the first failure of the deciding kind.
func unreachable(causes []connectFailure) *unreachableError {
	e := &unreachableError{causes: causes}
	for _, c := range causes {
		r, hint, _ := connectCause(c.code, c.msg)
		if e.hint == "" || (r && !e.retryable) {
			e.hint = hint
		}
		e.retryable = e.retryable || r
	}
	return e
}

// connectWatch gathers connection failures until Kafka first answers.
type connectWatch struct {
	mu       sync.Mutex
	answered bool
	// latest holds each broker's latest failure, by broker, in the order
	// the brokers first failed.
	latest map[string]int
	causes []connectFailure
}

// answer records that Kafka answered a request: from now on brokers going
// away are for the retries to handle.
func (w *connectWatch) answer() {
	w.mu.Lock()
	w.answered = true
	w.mu.Unlock()
}

// observe takes one error event and returns the run's end if Kafka has
// proved unreachable.
func (w *connectWatch) observe(e kafka.Error) *unreachableError {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answered {
		return nil
	}
	if e.Code() == kafka.ErrAllBrokersDown {
		if len(w.causes) == 0 {
			return nil // no cause known yet; the failures come first
		}
		return unreachable(append([]connectFailure(nil), w.causes...))
	}
	if _, _, ok := connectCause(e.Code(), e.String()); !ok {
		return nil
	}
	msg := e.String()
	// librdkafka starts each message with the broker's name:
	// "host:9092/bootstrap: Connect to ... failed: ...".
	broker, _, _ := strings.Cut(msg, ": ")
	if w.latest == nil {
		w.latest = map[string]int{}
	}
	f := connectFailure{code: e.Code(), msg: msg}
	if i, seen := w.latest[broker]; seen {
		w.causes[i] = f
	} else {
		w.latest[broker] = len(w.causes)
		w.causes = append(w.causes, f)
	}
	return nil
}
