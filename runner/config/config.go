// Package config turns the runner's flags and REPLAY_* environment variables
// into a validated Config. It is pure Go (no cgo, no Kafka client) so that the
// launcher shares the exact names and the target and scope grammar with the
// runner instead of restating them.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// EnvPrefix is the prefix of every runner environment variable.
const EnvPrefix = "REPLAY"

// Environment variable names. These, the flag names and the ReplayRequest
// fields are one contract: the launcher builds Jobs from these constants.
const (
	EnvBootstrapServers       = "REPLAY_BOOTSTRAP_SERVERS"
	EnvGroup                  = "REPLAY_GROUP"
	EnvTopics                 = "REPLAY_TOPICS"
	EnvTo                     = "REPLAY_TO"
	EnvDryRun                 = "REPLAY_DRY_RUN"
	EnvKafkaConfigDir         = "REPLAY_KAFKA_CONFIG_DIR"
	EnvKafkaSecretDir         = "REPLAY_KAFKA_SECRET_DIR"
	EnvResultFile             = "REPLAY_RESULT_FILE"
	EnvTerminationMessagePath = "REPLAY_TERMINATION_MESSAGE_PATH"
	EnvRunID                  = "REPLAY_RUN_ID"
	EnvWaitForEmpty           = "REPLAY_WAIT_FOR_EMPTY"
	EnvOutput                 = "REPLAY_OUTPUT"
	EnvTimeout                = "REPLAY_TIMEOUT"
	EnvEmitRecord             = "REPLAY_EMIT_RECORD"
	EnvAllowUnsafeProperties  = "REPLAY_ALLOW_UNSAFE_PROPERTIES"
	EnvAllowUnboundSecret     = "REPLAY_ALLOW_UNBOUND_SECRET"
	EnvFieldNames             = "REPLAY_FIELD_NAMES"
	EnvMaxMessagesToReconsume = "REPLAY_MAX_MESSAGES_TO_RECONSUME"
	EnvAllowSkip              = "REPLAY_ALLOW_SKIP"
	EnvForce                  = "REPLAY_FORCE"
	EnvFileDigest             = "REPLAY_FILE_DIGEST"
	EnvPropertiesDigest       = "REPLAY_PROPERTIES_DIGEST"
	EnvCADigest               = "REPLAY_CA_DIGEST"
	EnvCommitMode             = "REPLAY_COMMIT_MODE"
	EnvClusterID              = "REPLAY_CLUSTER_ID"
	EnvGroupType              = "REPLAY_GROUP_TYPE"
	EnvAllGroups              = "REPLAY_ALL_GROUPS"
	EnvContinueOnError        = "REPLAY_CONTINUE_ON_ERROR"
	// EnvList is --list: the launcher's Jobs take environment variables
	// only (the chart's admission policy allows no arguments), so the
	// read-only listing a group selector is resolved from has one too.
	EnvList = "REPLAY_LIST"

	EnvDeleteAllInternalTopics = "REPLAY_DELETE_ALL_INTERNAL_TOPICS"
)

// Flag names (without dashes).
const (
	FlagBootstrapServers = "bootstrap-servers"
	FlagGroup            = "group"
	FlagTopic            = "topic"
	FlagTo               = "to"
	FlagDryRun           = "dry-run"
	FlagKafkaConfigDir   = "kafka-config-dir"
	// FlagKafkaSecretDir is the credentials' directory (a mounted Secret):
	// the only place a binding (its bootstrap.servers) is read from.
	FlagKafkaSecretDir = "kafka-secret-dir"
	FlagResultFile     = "result-file"
	FlagRunID          = "run-id"
	FlagWaitForEmpty   = "wait-for-empty"
	FlagOutput         = "output"
	FlagTimeout        = "timeout"
	FlagEmitRecord     = "emit-record"
	// FlagAllowUnsafeProperties is the operator's, never a request's: the
	// launcher does not set it from a ReplayRequest.
	FlagAllowUnsafeProperties = "allow-unsafe-properties"
	// FlagAllowUnboundSecret is the operator's, never a request's: it lets
	// a secret directory without a binding be used with any bootstrap
	// servers (see credentials.go).
	FlagAllowUnboundSecret = "allow-unbound-secret"
	// FlagFieldNames says whose names errors use (see FieldNames); the
	// launcher sets it to spec.
	FlagFieldNames = "field-names"
	// FlagMaxMessagesToReconsume refuses (exit 7, LimitExceeded) a plan
	// that would re-consume more messages than this, in all partitions
	// together; unset means no limit.
	FlagMaxMessagesToReconsume = "max-messages-to-reconsume"
	// FlagAllowSkip lets a plan move a partition ahead of its committed
	// offset; without it such a plan is refused (exit 7,
	// WouldSkipMessages).
	FlagAllowSkip = "allow-skip"
	// FlagForce makes an undo: target restore also the partitions its
	// rules leave alone.
	FlagForce = "force"
	// FlagFileDigest is sha256:<hex> of the bytes of the file a file:,
	// plan: or undo: target reads; the runner refuses a file that differs.
	// The launcher sets it for the files it writes.
	FlagFileDigest = "file-digest"
	// FlagPropertiesDigest is sha256:<hex> of the secret directory's
	// properties other than the Secret-held ones (PropertiesDigestOf); the
	// runner refuses a directory whose properties differ. The launcher sets
	// it for the properties it puts there through pod annotations.
	FlagPropertiesDigest = "properties-digest"
	// FlagCADigest is sha256:<hex> of the secret directory's ssl.ca.pem
	// (CADigestOf); the runner refuses any other CA. The launcher sets it
	// when it puts there, through pod annotations, the CA certificates a
	// Strimzi Kafka of another namespace publishes in its status (public
	// data, so not in a Secret the runner pod could mount).
	FlagCADigest = "ca-digest"
	// FlagCommitMode is how the offsets are committed: CommitModeAtomic,
	// CommitModePlain or CommitModeAuto.
	FlagCommitMode = "commit-mode"
	// FlagClusterID is the ID of the Kafka cluster the bootstrap servers
	// must reach: a run that reaches another cluster (or one that gives no
	// ID) is refused before it reads, fences or commits anything. The
	// launcher sets it for a request that names a Strimzi Kafka, whose
	// replays are locked by that ID.
	FlagClusterID = "cluster-id"
	// FlagGroupType is the kind of group the user says the group is:
	// GroupTypeAuto (find it out), or one of Kafka's four kinds, which the
	// group must be (see GroupTypes). kafka-groups.sh spells it so.
	FlagGroupType = "group-type"
	// FlagContinueOnError lets a run over several groups go on to the next
	// group after one failed; without it the first failure stops the run.
	FlagContinueOnError = "continue-on-error"
	// FlagDeleteAllInternalTopics deletes a streams group's internal
	// topics once its offsets are moved, as kafka-streams-groups.sh
	// --reset-offsets --execute --delete-all-internal-topics does; a dry
	// run lists them and deletes nothing.
	FlagDeleteAllInternalTopics = "delete-all-internal-topics"
)

// Commit modes (--commit-mode, REPLAY_COMMIT_MODE, spec.commitMode).
const (
	// CommitModeAtomic commits through a Kafka transaction whose
	// transactional.id is TransactionalID(group): every earlier replay of
	// the group on the cluster is fenced, and the offsets show all at once
	// or not at all.
	CommitModeAtomic = "Atomic"
	// CommitModePlain commits with OffsetCommit requests, as Kafka's own
	// tool does.
	CommitModePlain = "Plain"
	// CommitModeAuto is Atomic where the Kafka user may use the
	// transactional ID, Plain where it may not.
	CommitModeAuto = "Auto"
)

// CommitModes lists the commit modes, for errors and the CRD's enum.
var CommitModes = []string{CommitModeAtomic, CommitModePlain, CommitModeAuto}

// Group types (--group-type, REPLAY_GROUP_TYPE, spec.groupType, and the
// result's groupType): Kafka's four kinds of group, as ListGroups and
// kafka-groups.sh --group-type name them, capitalised as the CRD's enums.
const (
	// GroupTypeAuto resets the group as the kind it is found to be.
	GroupTypeAuto = "Auto"
	// GroupTypeClassic is a consumer group on the classic protocol
	// (JoinGroup/SyncGroup), and a group of committed offsets alone.
	GroupTypeClassic = "Classic"
	// GroupTypeConsumer is a consumer group on KIP-848's protocol
	// (ConsumerGroupHeartbeat).
	GroupTypeConsumer = "Consumer"
	// GroupTypeShare is a KIP-932 share group.
	GroupTypeShare = "Share"
	// GroupTypeStreams is a KIP-1071 streams group.
	GroupTypeStreams = "Streams"
)

// GroupTypes lists what --group-type takes, for errors and the CRD's enum.
var GroupTypes = []string{GroupTypeAuto, GroupTypeClassic, GroupTypeConsumer, GroupTypeShare, GroupTypeStreams}

// TransactionalID is the transactional.id of an Atomic replay of group:
// derived from the group alone, so that two replays of one group on one
// cluster fence each other however they address it.
func TransactionalID(group string) string { return "kafka-replay." + group }

// Output formats for stdout.
const (
	OutputTable = "table"
	OutputJSON  = "json"
	// OutputCSV is the plan as kafka-consumer-groups.sh --export writes
	// it (group,topic,partition,offset), for its --from-file or the
	// runner's file: target; --export is its alias.
	OutputCSV = "csv"
)

// DefaultTerminationMessagePath is where Kubernetes reads a container's
// termination message from.
const DefaultTerminationMessagePath = "/dev/termination-log"

// Config is the runner's whole configuration. Field tags are the full
// environment variable names, processed with an empty envconfig prefix:
// envconfig falls back to a tag's bare name when the prefixed variable is
// unset, so tags such as "GROUP" under the prefix REPLAY would silently read
// GROUP, TO or OUTPUT from the pod's environment. config_test.go checks that
// the tags match the Env* constants.
type Config struct {
	// FieldNames comes first: envconfig stops at the first variable it
	// cannot parse, and even that error is worded in these names.
	FieldNames             FieldNames    `envconfig:"REPLAY_FIELD_NAMES"`
	BootstrapServers       string        `envconfig:"REPLAY_BOOTSTRAP_SERVERS"`
	Group                  string        `envconfig:"REPLAY_GROUP"`
	Topics                 TopicList     `envconfig:"REPLAY_TOPICS"`
	To                     string        `envconfig:"REPLAY_TO"`
	DryRun                 bool          `envconfig:"REPLAY_DRY_RUN"`
	KafkaConfigDir         string        `envconfig:"REPLAY_KAFKA_CONFIG_DIR"`
	KafkaSecretDir         string        `envconfig:"REPLAY_KAFKA_SECRET_DIR"`
	ResultFile             string        `envconfig:"REPLAY_RESULT_FILE"`
	TerminationMessagePath string        `envconfig:"REPLAY_TERMINATION_MESSAGE_PATH" default:"/dev/termination-log"`
	RunID                  string        `envconfig:"REPLAY_RUN_ID"`
	WaitForEmpty           time.Duration `envconfig:"REPLAY_WAIT_FOR_EMPTY"`
	Output                 string        `envconfig:"REPLAY_OUTPUT" default:"table"`
	Timeout                time.Duration `envconfig:"REPLAY_TIMEOUT" default:"2m"`
	EmitRecord             bool          `envconfig:"REPLAY_EMIT_RECORD"`
	AllowUnsafeProperties  NameList      `envconfig:"REPLAY_ALLOW_UNSAFE_PROPERTIES"`
	AllowUnboundSecret     bool          `envconfig:"REPLAY_ALLOW_UNBOUND_SECRET"`
	MaxMessagesToReconsume Limit         `envconfig:"REPLAY_MAX_MESSAGES_TO_RECONSUME"`
	AllowSkip              bool          `envconfig:"REPLAY_ALLOW_SKIP"`
	Force                  bool          `envconfig:"REPLAY_FORCE"`
	FileDigest             string        `envconfig:"REPLAY_FILE_DIGEST"`
	PropertiesDigest       string        `envconfig:"REPLAY_PROPERTIES_DIGEST"`
	CADigest               string        `envconfig:"REPLAY_CA_DIGEST"`
	CommitMode             string        `envconfig:"REPLAY_COMMIT_MODE" default:"Plain"`
	ClusterID              string        `envconfig:"REPLAY_CLUSTER_ID"`
	GroupType              string        `envconfig:"REPLAY_GROUP_TYPE" default:"Auto"`
	AllGroups              bool          `envconfig:"REPLAY_ALL_GROUPS"`
	ContinueOnError        bool          `envconfig:"REPLAY_CONTINUE_ON_ERROR"`

	// Groups holds the groups of a --group given more than once, in order
	// (Group is empty then). A group list has no environment variable: a
	// group ID may hold any character but control characters, so no
	// separator is safe, and the launcher runs one group per Job.
	Groups []string `ignored:"true"`
	// DeleteAllInternalTopics is --delete-all-internal-topics.
	DeleteAllInternalTopics bool `envconfig:"REPLAY_DELETE_ALL_INTERNAL_TOPICS"`

	// ToFlag is the alias the target was given with (--to-offset, say),
	// so that an error about the target names what the user typed; empty
	// for --to and REPLAY_TO.
	ToFlag string `ignored:"true"`

	// Parsed forms, filled by Validate.
	Target Target `ignored:"true"`
	Scope  Scope  `ignored:"true"`
	// KafkaProperties holds the properties of the config and secret
	// directories together, the binding (the secret's bootstrap.servers)
	// left out: the runner's own bootstrap list is the checked flag.
	KafkaProperties Properties `ignored:"true"`
}

// TopicList is REPLAY_TOPICS: entries separated by whitespace, because an
// entry such as orders:0,1,2 contains commas (envconfig's default separator).
type TopicList []string

// Decode implements envconfig.Decoder.
func (l *TopicList) Decode(v string) error {
	*l = strings.Fields(v)
	return nil
}

// NameList is a comma-separated list of names.
type NameList []string

// Decode implements envconfig.Decoder.
func (l *NameList) Decode(v string) error { return l.Set(v) }

// Set implements flag.Value; the last setting wins as a whole.
func (l *NameList) Set(v string) error {
	*l = nil
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, n)
		}
	}
	return nil
}

func (l *NameList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// FieldError is an invalid input, named the way the user gave it.
type FieldError struct {
	Flag string // without dashes; empty if the field has no flag
	Env  string
	// Msg may hold Refs to other settings, rendered in Names.
	Msg string
	// Names is whose names the error speaks in (flags when empty); Load
	// sets it from REPLAY_FIELD_NAMES.
	Names FieldNames
	// Cause, when set, classifies the error further (ErrCredentialsNotBound)
	// for errors.Is; it is not part of the message.
	Cause error
}

// Unwrap returns the error's classification, if any.
func (e *FieldError) Unwrap() error { return e.Cause }

func (e *FieldError) Error() string {
	msg := e.Names.Expand(e.Msg)
	if f := e.Names.field(e.Flag, e.Env); f != "" {
		return f + ": " + msg
	}
	return msg
}

// Errors collects every invalid input, so a user fixes them in one go.
type Errors []*FieldError

// Unwrap lets errors.Is see every error's classification.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// IsInvalidInput reports whether err is an input error (exit code 2).
func IsInvalidInput(err error) bool {
	var es Errors
	var fe *FieldError
	return errors.As(err, &es) || errors.As(err, &fe)
}

// named makes every error speak in the names the runner was started with.
func (es Errors) named(n FieldNames) Errors {
	for _, e := range es {
		e.Names = n
	}
	return es
}

// ErrHelp is returned by Load when --help was asked for; usage was printed.
var ErrHelp = flag.ErrHelp

// Load reads the environment, then the flags (which win), then validates.
// It never contacts Kafka. On invalid input it still returns the Config as
// far as it could be read, so the caller can write the failure to the
// configured result file and termination message.
func Load(args []string, stderr io.Writer) (*Config, error) {
	c := Config{TerminationMessagePath: DefaultTerminationMessagePath, Output: OutputTable}
	// The empty prefix is deliberate: the tags carry the full names (see Config).
	if err := envconfig.Process("", &c); err != nil {
		// envconfig stops at the first bad variable, so the rest of the
		// configuration is unknown and is not validated. The flags are still
		// read, as they may name the result file the failure is written to.
		fs, _ := c.flagSet(stderr)
		if errors.Is(fs.Parse(args), flag.ErrHelp) {
			return nil, ErrHelp
		}
		c.Output = OutputTable
		names, _ := ParseFieldNames(string(c.FieldNames))
		return &c, Errors{envError(err)}.named(names)
	}
	fs, aliases := c.flagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		names, _ := ParseFieldNames(string(c.FieldNames))
		return &c, Errors{{Msg: err.Error(), Names: names}}
	}
	var errs Errors
	if fs.NArg() > 0 {
		errs = append(errs, &FieldError{Msg: fmt.Sprintf("unexpected argument %q; every setting is a --flag", fs.Arg(0))})
	}
	if rep := aliases.repeated(); len(rep) > 0 {
		// Which of the values was meant is unknown: validate nothing else
		// that could depend on it.
		names, _ := ParseFieldNames(string(c.FieldNames))
		aliases.groupsInto(&c)
		return &c, append(errs, rep...).named(names)
	}
	aliasErr := aliases.apply(&c, fs)
	if aliasErr != nil {
		errs = append(errs, aliasErr)
	}
	if err := c.Validate(); err != nil {
		var ves Errors
		if !errors.As(err, &ves) {
			return nil, err
		}
		for _, e := range ves {
			// An alias that could not be read left no target: that is the
			// alias's error, already reported, not a missing --to.
			if aliasErr != nil && e.Flag == FlagTo {
				continue
			}
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		names, _ := ParseFieldNames(string(c.FieldNames))
		return &c, errs.named(names)
	}
	return &c, nil
}

// envFlags maps each environment variable to its flag, so an error about a
// variable also names the flag that overrides it.
var envFlags = func() map[string]string {
	m := map[string]string{}
	for _, s := range settings {
		m[s.Env] = s.Flag
	}
	return m
}()

// envOf is the environment variable of a flag, if it has one.
func envOf(flagName string) string {
	for e, f := range envFlags {
		if f == flagName {
			return e
		}
	}
	return ""
}

func envError(err error) *FieldError {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		// KeyName is already the full variable name (REPLAY_...).
		return &FieldError{Flag: envFlags[pe.KeyName], Env: pe.KeyName, Msg: fmt.Sprintf("%q is not a valid %s", pe.Value, pe.TypeName)}
	}
	return &FieldError{Msg: err.Error()}
}

// MaxRunIDLength bounds a run ID. The launcher's are namespace/name/hash,
// up to 334 bytes; the commit metadata that carries one must stay within
// Kafka's offset.metadata.max.bytes (4096 by default).
const MaxRunIDLength = 512

// runIDChars is a run ID's alphabet; its length is checked on its own
// (validRunID). A counted repetition {1,512} would compile, at every start
// of the process, into 512 copies of the class: 1.2 ms and 350 KB of a
// one-shot run's start-up, for the same answer.
var runIDChars = regexp.MustCompile(`^[A-Za-z0-9._:/-]+$`)

// validRunID says whether id is 1 to MaxRunIDLength characters of
// runIDChars. The alphabet is ASCII, so its bytes are its characters.
func validRunID(id string) bool {
	return len(id) >= 1 && len(id) <= MaxRunIDLength && runIDChars.MatchString(id)
}

// Names is whose names the configuration's errors use; flags until
// Validate has read REPLAY_FIELD_NAMES.
func (c *Config) Names() FieldNames {
	n, _ := ParseFieldNames(string(c.FieldNames))
	return n
}

// refOfKind is the reference that names a file-reading target kind.
func refOfKind(k TargetKind) string {
	switch k {
	case KindPlan:
		return RefPlan
	case KindUndo:
		return RefUndo
	}
	return RefOffsetsFile
}

// checkFileTarget checks a parsed target against the settings that go with
// a file (parseTarget has checked the file's bytes against --file-digest),
// and a result file, or a CSV's group column, against the group.
func (c *Config) checkFileTarget(errs *Errors, toFlag, toEnv string) {
	t := &c.Target
	t.Force = c.Force
	reads := t.Kind == KindFile || t.Kind == KindPlan || t.Kind == KindUndo
	if c.FileDigest != "" && !reads {
		*errs = append(*errs, &FieldError{Flag: FlagFileDigest, Env: EnvFileDigest, Msg: fmt.Sprintf("only applies to a target that reads a file (file:, plan:, undo:), not %s", t.Kind)})
		return
	}
	if ValidateGroup(c.Group) != nil {
		return
	}
	var err error
	switch {
	case t.Kind == KindFile:
		err = t.fileGroup.check(c.Group)
	case t.Result == nil:
	case t.Kind == KindPlan:
		err = CheckPlanFile(t.Result, c.Group)
	default:
		err = CheckUndoFile(t.Result, c.Group)
	}
	if err != nil {
		flagName, env := toFlag, toEnv
		if toFlag == FlagTo {
			flagName, env = refOfKind(t.Kind), EnvTo
		}
		*errs = append(*errs, &FieldError{Flag: flagName, Env: env, Msg: fmt.Sprintf("%s:%s %v", t.Kind, t.File, err)})
	}
}

// Validate checks every field and fills the parsed forms. All problems are
// returned together as Errors.
func (c *Config) Validate() error {
	var errs Errors
	bad := func(flagName, env, format string, a ...any) {
		errs = append(errs, &FieldError{Flag: flagName, Env: env, Msg: fmt.Sprintf(format, a...)})
	}
	if names, err := ParseFieldNames(string(c.FieldNames)); err != nil {
		bad(FlagFieldNames, EnvFieldNames, "%v", err)
	} else {
		c.FieldNames = names
	}
	if err := ValidateBootstrapServers(c.BootstrapServers); err != nil {
		bad(FlagBootstrapServers, EnvBootstrapServers, "%v", err)
	}
	c.validateGroups(bad)
	scope, err := ParseScope(c.Topics)
	if err != nil {
		bad(FlagTopic, EnvTopics, "%v", err)
	}
	c.Scope = scope
	// An error about the target names the flag it was given with.
	toFlag, toEnv := FlagTo, EnvTo
	if c.ToFlag != "" && c.ToFlag != FlagTo {
		toFlag, toEnv = c.ToFlag, ""
	}
	// A file the digest does not vouch for is refused before it is decoded.
	digest := c.FileDigest
	if digest != "" && !fileDigestPattern.MatchString(digest) {
		bad(FlagFileDigest, EnvFileDigest, "%q is not %s<64 lowercase hex digits>", digest, FileDigestPrefix)
		digest = ""
	}
	var digestErr *FileDigestError
	if strings.TrimSpace(c.To) == "" {
		bad(toFlag, toEnv, "is required: earliest, latest, time:<RFC3339>, ago:<duration>, offset:<N>, shift:<+N|-N>, file:<path>, group:<name>, plan:<path> or undo:<path>")
	} else if t, err := parseTarget(c.To, digest); errors.As(err, &digestErr) {
		bad(FlagFileDigest, EnvFileDigest, "%v", err)
	} else if err != nil {
		bad(toFlag, toEnv, "%v", err)
	} else {
		c.Target = t
		switch {
		case t.Kind == KindGroup && (t.Group == c.Group || slices.Contains(c.Groups, t.Group)):
			bad(toFlag, toEnv, "group:%s is the group being repositioned; name a different source group", t.Group)
		case c.Multi() && (t.Kind == KindFile || t.Kind == KindPlan || t.Kind == KindUndo):
			bad(toFlag, toEnv, "a %s: target reads one group's file, and this run moves several groups (%s); give one --%s", t.Kind, c.groupsSetting(), FlagGroup)
		case t.Kind == KindFile && !c.Scope.Empty():
			fileFlag := "--" + toFlag
			if toFlag == FlagTo {
				fileFlag += " file:"
			}
			bad(FlagTopic, EnvTopics, "conflicts with %s, whose entries already choose the partitions; leave the topics empty", fileFlag)
		case (t.Kind == KindPlan || t.Kind == KindUndo) && !c.Scope.Empty():
			bad(FlagTopic, EnvTopics, "conflicts with %s, whose file already chooses the partitions; leave the topics empty", c.Names().Name(refOfKind(t.Kind)))
		}
		c.checkFileTarget(&errs, toFlag, toEnv)
	}
	// A plan of an undo was planned with or without force already: force
	// changes nothing there, and the launcher sets it on every Job of a
	// forced undo, its apply of the approved plan included.
	planOfUndo := c.Target.Kind == KindPlan && c.Target.Result != nil && strings.HasPrefix(c.Target.Result.Target.Resolved, string(KindUndo)+":")
	if c.Force && c.Target.Kind != KindUndo && !planOfUndo && c.Target.Kind != "" {
		bad(FlagForce, EnvForce, "only applies to an undo target (%s), whose rules it overrides", c.Names().Name(RefUndo))
	}
	// An undo puts offsets back and cannot bring deleted topics back. A
	// plan: file deletes the internal topics its dry run listed, which its
	// digest binds, and only with the flag: the same flag on both runs (a
	// request's planning and apply Jobs share its spec), so neither a plan
	// that deletes nor a run that would is applied by surprise.
	if c.Target.Kind == KindUndo && c.DeleteAllInternalTopics {
		bad(FlagDeleteAllInternalTopics, EnvDeleteAllInternalTopics, "does not go with %s: an undo puts offsets back, deletes no topic and cannot bring deleted topics back", c.Names().Name(RefUndo))
	}
	if r := c.Target.Result; c.Target.Kind == KindPlan && r != nil {
		switch {
		case c.DeleteAllInternalTopics && r.InternalTopics == nil:
			bad(FlagDeleteAllInternalTopics, EnvDeleteAllInternalTopics, "is set, and the plan of %s deletes no internal topic (its dry run ran without it): plan again with it, or apply the plan without it", c.Names().Name(RefPlan))
		case !c.DeleteAllInternalTopics && r.InternalTopics != nil:
			bad(FlagDeleteAllInternalTopics, EnvDeleteAllInternalTopics, "is not set, and the plan of %s deletes the internal topics %s once the offsets are moved: apply it with it, or plan again without it", c.Names().Name(RefPlan), orNoTopic(r.InternalTopics.Planned))
		}
	}
	// Topics are deleted for one group named by hand: never for a list
	// or every group the cluster lists.
	if c.DeleteAllInternalTopics && c.Multi() {
		bad(FlagDeleteAllInternalTopics, EnvDeleteAllInternalTopics, "deletes the internal topics of one streams group, and this run moves several (%s); give one %s", c.groupsSetting(), Ref(FlagGroup))
	}
	if c.DeleteAllInternalTopics && c.GroupType != GroupTypeAuto && c.GroupType != GroupTypeStreams {
		bad(FlagDeleteAllInternalTopics, EnvDeleteAllInternalTopics, "only a streams group has internal topics the runner can name, and %s says %s", c.Names().Name(FlagGroupType), c.GroupType)
	}
	switch c.Output {
	case OutputTable, OutputJSON:
	case OutputCSV:
		// The CSV is a file another tool reads; a frame in it would be a
		// bad row there.
		if c.EmitRecord {
			bad(FlagEmitRecord, EnvEmitRecord, "writes its frame to stdout, which --%s %s keeps for the CSV alone; use --%s or --%s %s", FlagOutput, OutputCSV, FlagResultFile, FlagOutput, OutputJSON)
		}
	default:
		bad(FlagOutput, EnvOutput, "%q is not one of table, json, csv", c.Output)
	}
	if !slices.Contains(CommitModes, c.CommitMode) {
		bad(FlagCommitMode, EnvCommitMode, "%q is not one of %s", c.CommitMode, strings.Join(CommitModes, ", "))
	}
	if !slices.Contains(GroupTypes, c.GroupType) {
		bad(FlagGroupType, EnvGroupType, "%q is not one of %s", c.GroupType, strings.Join(GroupTypes, ", "))
	}
	if c.WaitForEmpty < 0 {
		bad(FlagWaitForEmpty, EnvWaitForEmpty, "must not be negative, got %s", c.WaitForEmpty)
	}
	if c.Timeout <= 0 {
		bad(FlagTimeout, EnvTimeout, "must be positive, got %s", c.Timeout)
	}
	if c.RunID != "" && !validRunID(c.RunID) {
		bad(FlagRunID, EnvRunID, "must be 1-%d characters of letters, digits and ._:/-", MaxRunIDLength)
	}
	if c.ResultFile != "" {
		if err := checkWritableDir(filepath.Dir(c.ResultFile)); err != nil {
			bad(FlagResultFile, EnvResultFile, "%v", err)
		}
	}
	c.validateConnection(bad, &errs)
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// validateConnection checks and loads how the runner connects to Kafka
// (the config and secret directories, their unsafe properties, the
// secret's binding to the bootstrap servers), for a run and for a
// --list or --describe alike.
func (c *Config) validateConnection(bad func(flagName, env, format string, a ...any), errs *Errors) {
	allowErr := ValidateAllowedUnsafe(c.AllowUnsafeProperties)
	if allowErr != nil {
		bad(FlagAllowUnsafeProperties, EnvAllowUnsafeProperties, "%v", allowErr)
	}
	var configProps, secretProps Properties
	if c.KafkaConfigDir != "" {
		props, err := loadProperties(c.KafkaConfigDir, configDirKind)
		if err != nil {
			bad(FlagKafkaConfigDir, EnvKafkaConfigDir, "%v", err)
		} else if err := props.checkUnsafe(c.AllowUnsafeProperties); err != nil && allowErr == nil {
			bad(FlagKafkaConfigDir, EnvKafkaConfigDir, "%v", err)
		}
		configProps = props
	}
	if c.KafkaSecretDir != "" {
		props, err := loadProperties(c.KafkaSecretDir, secretDirKind)
		if err != nil {
			bad(FlagKafkaSecretDir, EnvKafkaSecretDir, "%v", err)
		} else if err := props.checkUnsafe(c.AllowUnsafeProperties); err != nil && allowErr == nil {
			bad(FlagKafkaSecretDir, EnvKafkaSecretDir, "%v", err)
		}
		secretProps = props
	}
	if err := checkPropertiesDigest(c.PropertiesDigest, secretProps, c.KafkaSecretDir != ""); err != nil {
		*errs = append(*errs, err)
	}
	if err := checkCADigest(c.CADigest, secretProps, c.KafkaSecretDir != ""); err != nil {
		*errs = append(*errs, err)
	}
	merged, credErrs := mergeCredentials(c.BootstrapServers, configProps, secretProps, c.KafkaSecretDir != "", c.AllowUnboundSecret)
	*errs = append(*errs, credErrs...)
	c.KafkaProperties = merged
}

func checkWritableDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// ValidateBootstrapServers checks a comma-separated host:port list.
func ValidateBootstrapServers(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("is required, as host:port[,host:port...]")
	}
	for _, hp := range strings.Split(s, ",") {
		hp = strings.TrimSpace(hp)
		// librdkafka also accepts a protocol prefix such as SSL://host:9093.
		if i := strings.Index(hp, "://"); i >= 0 {
			hp = hp[i+3:]
		}
		i := strings.LastIndex(hp, ":")
		if i <= 0 {
			return fmt.Errorf("%q is not host:port", hp)
		}
		host, port := hp[:i], hp[i+1:]
		if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
			return fmt.Errorf("%q has an unbalanced IPv6 bracket", hp)
		}
		if strings.ContainsAny(host, " /\t") {
			return fmt.Errorf("%q has an invalid host", hp)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q has an invalid port", hp)
		}
	}
	return nil
}

// CommitBound is how long a runner may keep running once its commit has
// begun, for a --timeout of timeout: the commit with its retries, then the
// read-back, each bounded by timeout. A signal does not cut this short (the
// outcome must be known), so whatever stops a runner from outside (a pod's
// termination grace period, say) must wait at least this long.
func CommitBound(timeout time.Duration) time.Duration { return AddDurations(timeout, timeout) }

// AddDurations is a + b for durations that are not negative (validated
// settings), saturating at the longest duration: a sum that wrapped around
// to a negative one would be a deadline already passed, and a run given
// more time than it can use would end at once.
func AddDurations(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// orNoTopic lists topics, or says there are none.
func orNoTopic(topics []string) string {
	if len(topics) == 0 {
		return "(none: its topology names no internal topic)"
	}
	return strings.Join(topics, ", ")
}
