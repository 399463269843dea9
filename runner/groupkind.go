package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

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
	done   chan struct{}
	cancel context.CancelFunc
	info   groupkind.Info
	err    error
}

func (r *run) startKindCheck(ctx context.Context) *kindCheck {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	k := &kindCheck{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(k.done)
		k.err = recovering(func() (err error) {
			k.info, err = r.checkKind(ctx)
			return err
		})()
	}()
	return k
}

// wait returns the check's outcome; stop abandons it.
func (k *kindCheck) wait() (groupkind.Info, error) {
	<-k.done
	k.cancel()
	return k.info, k.err
}

func (k *kindCheck) stop() {
	k.cancel()
	<-k.done
}

// explain is the snapshot's error err, or what is wrong instead when the
// group is a share group and err is about the input: a share group has no
// committed offsets to take a scope from. A Kafka that could not be
// reached or refused the credentials stops the check instead of waiting
// for it.
func (k *kindCheck) explain(err error, scopeless bool) error {
	var ie *inputError
	if !config.IsInvalidInput(err) && !errors.As(err, &ie) {
		k.stop()
		return err
	}
	info, _ := k.wait()
	if info.Kind == groupkind.Share && scopeless {
		return &inputError{config.Ref(config.FlagTopic), fmt.Sprintf("%s is a share group, which has no committed offsets to take the topics from: name them", info.Kind)}
	}
	return err
}

// checkKind finds the group's kind before anything is planned. The kind
// is asked with the second client (franz-go: librdkafka has no API for
// these kinds, see package groupkind), which has the same servers and
// credentials (secondOptions), and reads the group's offsets too.
func (r *run) checkKind(ctx context.Context) (groupkind.Info, error) {
	return groupkind.Describe(ctx, r.reader, r.cfg.Group)
}

// secondOptions translates the run's servers and Kafka properties into the
// second client's options (groupkind.Translate), reading its PEM files. A
// property it cannot reproduce is invalid input naming the property, and
// the run ends before either client connects: the second client never
// connects with weaker security than librdkafka, nor anywhere else.
func secondOptions(cfg *config.Config) ([]kgo.Opt, error) {
	opts, err := groupkind.ClientOptions(clientID, cfg.BootstrapServers, cfg.KafkaProperties)
	if err == nil {
		return opts, nil
	}
	field := config.Ref(config.FlagKafkaConfigDir)
	if cfg.KafkaSecretDir != "" {
		field = config.Ref(config.RefCredentials)
	}
	return nil, &inputError{field, err.Error() + "; nothing was contacted"}
}

// secondClient is a franz-go client with the runner's servers and
// credentials, and opts, for the requests librdkafka has no API for.
func (r *run) secondClient(opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(slices.Clip(r.second), opts...)...)
	if err != nil {
		return nil, &inputError{config.Ref(config.FlagBootstrapServers), err.Error()}
	}
	return cl, nil
}

// classicStreamsWarning recognises a Kafka Streams application on the
// classic protocol: its group is a classic consumer group named after its
// application.id, and its repartition topics are named
// <application.id>-<name>-repartition, on which it commits too. Such a
// group is reset as a consumer group, but its local state is not in Kafka,
// and its repartition topics are its own.
func classicStreamsWarning(group string, committed map[TP]Committed) string {
	seen := map[string]bool{}
	var topics []string
	for tp := range committed {
		if !seen[tp.Topic] && strings.HasPrefix(tp.Topic, group+"-") && strings.HasSuffix(tp.Topic, "-repartition") {
			seen[tp.Topic] = true
			topics = append(topics, tp.Topic)
		}
	}
	if len(topics) == 0 {
		return ""
	}
	slices.Sort(topics)
	return fmt.Sprintf("group %s looks like a Kafka Streams application on the classic protocol (it commits on %s, named as its repartition topics are): reset its local state too before it restarts (KafkaStreams#cleanUp, or delete its state directory), and name its input topics only; kafka-streams-application-reset.sh handles its repartition and internal topics",
		group, strings.Join(capNames(topics), ", "))
}

// foundType is the kind of group the run found, as --group-type names it:
// the coordinator's word for a share or streams group, else librdkafka's
// protocol of the consumer group g; empty when no group exists.
func foundType(info groupkind.Info, g GroupInfo) string {
	switch info.Kind {
	case groupkind.Share:
		return config.GroupTypeShare
	case groupkind.Streams:
		return config.GroupTypeStreams
	}
	return g.Type
}

// checkGroupType decides whether a group found to be of kind found
// (foundType) may be reset when the user stated it is of kind stated
// (--group-type). Every mismatch is refused, Classic against Consumer too: the user
// who states the kind asks for it to be checked, and Auto is there for
// whoever does not care.
func checkGroupType(group, stated, found string) error {
	field := config.Ref(config.FlagGroupType)
	refuse := func(format string, a ...any) error {
		return &kindMismatchError{inputError{field, fmt.Sprintf(format, a...)}}
	}
	made := stated == config.GroupTypeClassic || stated == config.GroupTypeConsumer
	switch {
	case stated == config.GroupTypeAuto || stated == found:
		return nil
	case found == "" && made:
		// No group yet: the commit makes one, which its consumers then
		// join with either protocol.
		return nil
	case found == "":
		return refuse("%s: group %s does not exist, and Kafka sets a %s group's offsets only once the group exists (a reset makes a new group a %s group); nothing was planned or changed", stated, group, strings.ToLower(stated), config.GroupTypeClassic)
	}
	return refuse("%s: group %s is a %s group, not a %s group; state %s, or %s; nothing was planned or changed", stated, group, found, stated, found, config.GroupTypeAuto)
}

// kindMismatchError is a group that is not shown to be of the kind
// --group-type states: exit 2, reason UnsupportedGroupKind.
type kindMismatchError struct{ inputError }

// checkStatedType checks the group against --group-type before anything
// else reads or writes: a group of another kind is neither fenced
// (Atomic), waited for nor planned. The kind check is already running;
// librdkafka's describe tells a classic group from a KIP-848 one.
func (r *run) checkStatedType(ctx context.Context, k *kafkaClient, kind *kindCheck, res *report.Result) error {
	g, err := k.describeGroup(ctx, r.cfg.Group)
	if err != nil {
		kind.stop()
		return err
	}
	info, err := kind.wait()
	if err != nil {
		return err
	}
	res.GroupType = foundType(info, g)
	return checkGroupType(r.cfg.Group, r.cfg.GroupType, res.GroupType)
}

// checkFileType refuses a plan: or undo: file of a group of the other
// family than the group is now (found): a consumer group's committed
// offsets and a share group's start offsets are moved through different
// APIs and mean different things, so neither is applied as the other. A
// file that names no kind (a runner before kinds were recorded, or a
// group that did not exist) was a consumer group's: share groups took no
// such files then.
func checkFileType(t config.Target, group, found string) error {
	if t.Result == nil || (t.Kind != config.KindPlan && t.Kind != config.KindUndo) {
		return nil
	}
	was := t.Result.GroupType
	if (was == config.GroupTypeShare) == (found == config.GroupTypeShare) {
		return nil
	}
	ref, what := config.RefPlan, "a plan"
	if t.Kind == config.KindUndo {
		ref, what = config.RefUndo, "the result of a run"
	}
	of := "a " + was + " group"
	if was == "" {
		of = "a consumer group (it names no kind)"
	}
	now := "a " + found + " group"
	if found == "" {
		now = "a group that does not exist"
	}
	return &inputError{config.Ref(ref), fmt.Sprintf("%s:%s is %s of %s, and group %s is now %s: a share group's start offsets and a consumer group's committed offsets are set through different APIs, so neither is applied as the other; nothing was planned or changed", t.Kind, t.File, what, of, group, now)}
}
