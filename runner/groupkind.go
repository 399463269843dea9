package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
)

// kindError refuses a group of a kind the runner does not reset: a share
// group or a streams group through the consumer-group offset APIs would be
// planned as a new, empty consumer group (librdkafka describes both as a
// group that does not exist, whatever members they have).
type kindError struct {
	group string
	info  groupkind.Info
}

func (e *kindError) Error() string {
	var how string
	switch e.info.Kind {
	case groupkind.Share:
		how = "a share group (KIP-932) has start offsets, not committed offsets; reset it with kafka-share-groups.sh --reset-offsets"
	case groupkind.Streams:
		how = "a streams group (KIP-1071) is reset on its input topics only, with the application's local state; use kafka-streams-groups.sh --reset-offsets"
		if len(e.info.SourceTopics) > 0 {
			how += " --input-topic " + strings.Join(e.info.SourceTopics, ",")
		}
	}
	members := fmt.Sprintf("state %s, %d member(s)", e.info.State, len(e.info.Members))
	if len(e.info.Members) > 0 {
		members += ": " + strings.Join(capNames(e.info.Members), ", ")
	}
	return fmt.Sprintf("%s: group %s is a %s group (%s), and the runner resets consumer groups only: %s; nothing was changed",
		config.Ref(config.FlagGroup), e.group, e.info.Kind, members, how)
}

// capNames keeps an error short for a group with many members.
func capNames(names []string) []string {
	if len(names) <= maxNamed {
		return names
	}
	return append(names[:maxNamed:maxNamed], fmt.Sprintf("and %d more", len(names)-maxNamed))
}

// kindCheck is checkKind running beside the snapshot: it costs no time
// of its own, and whatever librdkafka makes of the connection (refused
// credentials, an unreachable cluster) is the run's outcome before the
// kind is looked at.
type kindCheck struct {
	done    chan struct{}
	cancel  context.CancelFunc
	warning string
	err     error
}

func (r *run) startKindCheck(ctx context.Context) *kindCheck {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	k := &kindCheck{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(k.done)
		k.err = recovering(func() (err error) {
			k.warning, err = r.checkKind(ctx)
			return err
		})()
	}()
	return k
}

// wait returns the check's outcome; stop abandons it.
func (k *kindCheck) wait() (string, error) {
	<-k.done
	k.cancel()
	return k.warning, k.err
}

func (k *kindCheck) stop() {
	k.cancel()
	<-k.done
}

// explain is the snapshot's error err, or the kind refusal when the group
// is not a consumer group and err is about the input: a share group has
// no committed offsets to take a scope from, which is not what is wrong.
// A Kafka that could not be reached or refused the credentials stops the
// check instead of waiting for it.
func (k *kindCheck) explain(err error) error {
	var ie *inputError
	if !config.IsInvalidInput(err) && !errors.As(err, &ie) {
		k.stop()
		return err
	}
	var ke *kindError
	if _, kerr := k.wait(); errors.As(kerr, &ke) {
		return kerr
	}
	return err
}

// checkKind refuses, before anything is planned, a group that is not a
// consumer group. The kind is asked with a second, short-lived client
// (franz-go: librdkafka has no API for these kinds, see package groupkind)
// with the same servers and credentials. Properties that client cannot
// reproduce leave the kind unchecked, which the result says: refusing
// them would stop consumer-group replays that work today.
func (r *run) checkKind(ctx context.Context) (warning string, err error) {
	cfg := r.cfg
	opts, err := groupkind.Options(clientID, cfg.BootstrapServers, cfg.KafkaProperties)
	var unsupported *groupkind.UnsupportedError
	if errors.As(err, &unsupported) {
		return fmt.Sprintf("the group's kind was not checked (%v): the run treats %s as a consumer group; Kafka refuses the commit to a share group and to a streams group with members, but an empty streams group's offsets would be moved as a consumer group's, on every topic in scope", err, cfg.Group), nil
	}
	if err != nil {
		return "", err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return "", &inputError{config.Ref(config.FlagBootstrapServers), err.Error()}
	}
	defer cl.Close()
	info, err := groupkind.Describe(ctx, cl, cfg.Group)
	if err != nil {
		return "", err
	}
	if info.Kind != groupkind.Consumer {
		return "", &kindError{group: cfg.Group, info: info}
	}
	return "", nil
}
