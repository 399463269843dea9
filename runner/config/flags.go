package config

import (
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Aliases that mirror kafka-consumer-groups.sh --reset-offsets, so that
// operators can reuse what their fingers know. Each one is a spelling of a
// --to target; giving two of them (or one and --to) is an error.
const (
	FlagBootstrapServerAlias = "bootstrap-server"
	FlagToEarliest           = "to-earliest"
	FlagToLatest             = "to-latest"
	FlagToDatetime           = "to-datetime"
	FlagToOffset             = "to-offset"
	FlagShiftBy              = "shift-by"
	FlagByDuration           = "by-duration"
	FlagFromFile             = "from-file"
	// FlagExport is --output csv, as kafka-consumer-groups.sh's --export
	// switches its output to CSV.
	FlagExport = "export"
)

type targetAliases struct {
	earliest, latest, export                        bool
	datetime, offset, shiftBy, byDuration, fromFile string
	topics, groups                                  []string
	// given records every setting of a single-value flag, in order, so
	// that a repeated one is refused instead of the last one winning.
	given []givenFlag
}

// givenFlag is one setting of a flag on the command line.
type givenFlag struct{ name, value string }

func (g givenFlag) String() string {
	if g.value == "true" {
		return "--" + g.name // a boolean switched on, as typed
	}
	return "--" + g.name + " " + strconv.Quote(g.value)
}

// recorded wraps a flag's value to record each time it is set.
type recorded struct {
	flag.Value
	name  string
	given *[]givenFlag
}

func (r *recorded) Set(s string) error {
	*r.given = append(*r.given, givenFlag{r.name, s})
	return r.Value.Set(s)
}

// IsBoolFlag keeps boolean flags usable without a value (--dry-run).
func (r *recorded) IsBoolFlag() bool {
	b, ok := r.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// repeatableFlags may be given more than once; every other flag holds one
// value, and giving it twice (itself or through an alias) is an error.
var repeatableFlags = map[string]bool{FlagTopic: true, FlagGroup: true}

// flagGroups are flags that set the same thing: at most one of each group,
// once. A flag in no group is a group of its own.
var flagGroups = [][]string{
	{FlagBootstrapServers, FlagBootstrapServerAlias},
	{FlagTo, FlagToEarliest, FlagToLatest, FlagToDatetime, FlagToOffset, FlagShiftBy, FlagByDuration, FlagFromFile},
	{FlagOutput, FlagExport},
}

func (c *Config) flagSet(stderr io.Writer) (*flag.FlagSet, *targetAliases) {
	fs := flag.NewFlagSet("kafka-replay-runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a := &targetAliases{}
	env := map[string]string{}
	str := func(p *string, name, envName, usage string) {
		fs.StringVar(p, name, *p, usage)
		env[name] = envName
	}
	str(&c.BootstrapServers, FlagBootstrapServers, EnvBootstrapServers, "Kafka bootstrap list, host:port[,host:port...]")
	fs.StringVar(&c.BootstrapServers, FlagBootstrapServerAlias, c.BootstrapServers, "alias of --bootstrap-servers (kafka-consumer-groups.sh)")
	fs.Func(FlagGroup, "consumer group to reposition; repeatable, as in kafka-consumer-groups.sh: each group is then a run of its own, in the order given (no env form for more than one)", func(v string) error {
		a.groups = append(a.groups, v)
		return nil
	})
	env[FlagGroup] = EnvGroup
	fs.BoolVar(&c.AllGroups, FlagAllGroups, c.AllGroups, "reposition every group the cluster lists (consumer groups, or those of --"+FlagGroupType+"), each as a run of its own, in name order; as kafka-consumer-groups.sh --all-groups")
	env[FlagAllGroups] = EnvAllGroups
	fs.BoolVar(&c.ContinueOnError, FlagContinueOnError, c.ContinueOnError, "with several groups, go on to the next group after one fails (default: the first failure stops the run; the groups after it are not attempted)")
	env[FlagContinueOnError] = EnvContinueOnError
	fs.Func(FlagTopic, "scope: orders, or orders:0,1,2 for chosen partitions; repeatable (env: separated by spaces); empty means every topic the group has committed", func(v string) error {
		a.topics = append(a.topics, v)
		return nil
	})
	env[FlagTopic] = EnvTopics
	str(&c.To, FlagTo, EnvTo, "target: earliest | latest | time:<RFC3339 with zone|unix ms> | ago:<duration> | offset:<N> | shift:<+N|-N> | file:<path> | group:<other-group> | plan:<dry run result> | undo:<run result>")
	fs.BoolVar(&c.DryRun, FlagDryRun, c.DryRun, "plan only: print what would change and commit nothing")
	env[FlagDryRun] = EnvDryRun
	str(&c.KafkaConfigDir, FlagKafkaConfigDir, EnvKafkaConfigDir, "directory of librdkafka properties, one file per property (a mounted ConfigMap); beside --"+FlagKafkaSecretDir+" it may not set "+strings.Join(ProtectedProperties(), ", "))
	str(&c.KafkaSecretDir, FlagKafkaSecretDir, EnvKafkaSecretDir, "directory of credential properties (a mounted Secret); its "+bindingProperty+" names the servers they are for, and --"+FlagBootstrapServers+" must be among them")
	str(&c.ResultFile, FlagResultFile, EnvResultFile, "also write the JSON result here, even when the run fails (an Argo output parameter)")
	str(&c.RunID, FlagRunID, EnvRunID, "idempotency key recorded in the commit metadata; from the launcher, the request's namespace/name/spec digest (default: random)")
	fs.DurationVar(&c.WaitForEmpty, FlagWaitForEmpty, c.WaitForEmpty, "if the group has active members, wait up to this long for it to become empty (0: fail at once)")
	env[FlagWaitForEmpty] = EnvWaitForEmpty
	str(&c.Output, FlagOutput, EnvOutput, "stdout format: table, json, or csv (the plan's new offsets as group,topic,partition,offset lines, which kafka-consumer-groups.sh --from-file and --to file: read; nothing when the run fails)")
	fs.DurationVar(&c.Timeout, FlagTimeout, c.Timeout, "bound on Kafka reads and the commit, retries included (not on --wait-for-empty)")
	env[FlagTimeout] = EnvTimeout
	fs.BoolVar(&c.EmitRecord, FlagEmitRecord, c.EmitRecord, "also write the whole result to stdout as one framed, checksummed block, for a reader of the pod log (the launcher)")
	env[FlagEmitRecord] = EnvEmitRecord
	fs.Var(&c.AllowUnsafeProperties, FlagAllowUnsafeProperties, "operator only: comma-separated librdkafka properties that run programs or load code, allowed in the config directory ("+strings.Join(UnsafePropertyNames(), ", ")+")")
	env[FlagAllowUnsafeProperties] = EnvAllowUnsafeProperties
	fs.BoolVar(&c.AllowUnboundSecret, FlagAllowUnboundSecret, c.AllowUnboundSecret, "operator only: use a --"+FlagKafkaSecretDir+" without "+bindingProperty+" with any servers, and let --"+FlagKafkaConfigDir+" set security settings beside it")
	env[FlagAllowUnboundSecret] = EnvAllowUnboundSecret
	fs.Func(FlagFieldNames, "whose names errors and hints use: flags (--topic), spec (spec.topics) when the launcher runs a ReplayRequest, or runbook (runbooks[].topics) in a chart runbook's Job (default flags)", func(v string) error {
		c.FieldNames = FieldNames(v)
		return nil
	})
	env[FlagFieldNames] = EnvFieldNames
	fs.Var(&c.MaxMessagesToReconsume, FlagMaxMessagesToReconsume, "refuse (exit 7, LimitExceeded) a plan that would re-consume more messages than this, all partitions together (default: no limit)")
	env[FlagMaxMessagesToReconsume] = EnvMaxMessagesToReconsume
	fs.BoolVar(&c.AllowSkip, FlagAllowSkip, c.AllowSkip, "allow moving a partition ahead of its committed offset, past messages its consumers never handled; without it such a plan is refused (exit 7, WouldSkipMessages)")
	env[FlagAllowSkip] = EnvAllowSkip
	fs.BoolVar(&c.Force, FlagForce, c.Force, "with --to undo:, also restore the partitions the undo rules leave alone")
	env[FlagForce] = EnvForce
	fs.BoolVar(&c.DeleteAllInternalTopics, FlagDeleteAllInternalTopics, c.DeleteAllInternalTopics, "a streams group only: once its offsets are moved, delete its internal topics (the topology's repartition and changelog topics named after the group), as kafka-streams-groups.sh --delete-all-internal-topics; a dry run lists them (bound by its plan digest) and deletes nothing, its plan: deletes exactly those; an undo cannot recreate them")
	env[FlagDeleteAllInternalTopics] = EnvDeleteAllInternalTopics
	str(&c.CommitMode, FlagCommitMode, EnvCommitMode, "how the offsets are committed: Plain (OffsetCommit, as Kafka's own tool), Atomic (a Kafka transaction with transactional.id kafka-replay.<group>, which fences every other replay of the group and shows all offsets or none; needs WRITE and DESCRIBE on that TransactionalId), or Auto (Atomic where allowed, else Plain) (default Plain)")
	str(&c.ClusterID, FlagClusterID, EnvClusterID, "the ID of the Kafka cluster the bootstrap servers must reach; another cluster is refused (exit 2) before anything is read or committed")
	str(&c.GroupType, FlagGroupType, EnvGroupType, "the kind of group --group is: Auto (find it out and reset it as that kind), or Classic, Consumer, Share or Streams, which it must be: any other kind is refused (exit 2) before anything is planned")
	str(&c.FileDigest, FlagFileDigest, EnvFileDigest, "sha256:<hex> of the file a file:, plan: or undo: target reads; a file with other bytes is refused (exit 2)")
	str(&c.CADigest, FlagCADigest, EnvCADigest, "sha256:<hex> of the --kafka-secret-dir ssl.ca.pem; a directory with another CA, or none, is refused (exit 2, CredentialsNotBound) before anything is contacted")
	str(&c.PropertiesDigest, FlagPropertiesDigest, EnvPropertiesDigest, "sha256:<hex> of the --kafka-secret-dir properties other than its certificates, keys and passwords; a directory with other properties is refused (exit 2, CredentialsNotBound) before anything is contacted")

	fs.BoolVar(&a.earliest, FlagToEarliest, false, "alias of --to earliest")
	fs.BoolVar(&a.latest, FlagToLatest, false, "alias of --to latest")
	fs.StringVar(&a.datetime, FlagToDatetime, "", "alias of --to time:<RFC3339 with zone>")
	fs.StringVar(&a.offset, FlagToOffset, "", "alias of --to offset:<N>")
	fs.StringVar(&a.shiftBy, FlagShiftBy, "", "alias of --to shift:<N> (a number without sign moves forward, as in Kafka)")
	fs.StringVar(&a.byDuration, FlagByDuration, "", "alias of --to ago:<duration>; Go (2h) or ISO-8601 (PT2H)")
	fs.StringVar(&a.fromFile, FlagFromFile, "", "alias of --to file:<path>")
	fs.BoolVar(&a.export, FlagExport, false, "alias of --output csv")

	fs.VisitAll(func(f *flag.Flag) {
		if !repeatableFlags[f.Name] {
			f.Value = &recorded{Value: f.Value, name: f.Name, given: &a.given}
		}
	})
	fs.Usage = func() { usage(fs, env) }
	return fs, a
}

// repeated returns an error for each group of flags given more than once,
// naming every setting, in order.
func (a *targetAliases) repeated() Errors {
	groupOf := map[string]int{}
	for i, g := range flagGroups {
		for _, n := range g {
			groupOf[n] = i
		}
	}
	byGroup := map[string][]givenFlag{}
	var order []string
	for _, g := range a.given {
		key := g.name
		if i, ok := groupOf[g.name]; ok {
			key = flagGroups[i][0]
		}
		if byGroup[key] == nil {
			order = append(order, key)
		}
		byGroup[key] = append(byGroup[key], g)
	}
	var errs Errors
	for _, key := range order {
		gs := byGroup[key]
		if len(gs) < 2 {
			continue
		}
		names := make([]string, len(gs))
		same := true
		for i, g := range gs {
			names[i] = g.String()
			same = same && g.name == gs[0].name
		}
		msg := "given more than once: "
		if !same {
			msg = "conflicting flags: "
		}
		msg += strings.Join(names, ", ")
		if key == FlagTo {
			msg += "; give exactly one target"
		} else {
			msg += "; give it once"
		}
		errs = append(errs, &FieldError{Flag: key, Env: envOf(key), Msg: msg})
	}
	return errs
}

func usage(fs *flag.FlagSet, env map[string]string) {
	w := fs.Output()
	_, _ = fmt.Fprint(w, `kafka-replay runner: reposition a Kafka consumer group's committed offsets, once, safely.

Every flag can also be set through its environment variable; a flag wins over
its variable. Aliases mirror kafka-consumer-groups.sh --reset-offsets.

`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "FLAG\tENVIRONMENT\tMEANING")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.SliceStable(names, func(i, j int) bool {
		// Flags with an environment variable first, then the aliases.
		_, ei := env[names[i]]
		_, ej := env[names[j]]
		return ei && !ej
	})
	for _, n := range names {
		f := fs.Lookup(n)
		e := env[n]
		if e == "" {
			e = "-"
		}
		name := "--" + n
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0s" {
			name += " (default " + f.DefValue + ")"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", name, e, f.Usage)
	}
	_, _ = fmt.Fprintf(tw, "-\t%s\twhere to write the compact result for the pod status (default %s)\n", EnvTerminationMessagePath, DefaultTerminationMessagePath)
	_, _ = fmt.Fprintf(tw, "--%s\t%s\tlist the groups instead of a run, read-only (--%s --help says more)\n", FlagList, EnvList, FlagList)
	_ = tw.Flush()
	_, _ = fmt.Fprint(w, `
Exit codes:
  0  applied, already applied (same run ID), or dry run
  1  internal error (a crash by signal, such as 134 for SIGABRT, means the same)
  2  invalid input; nothing changed
  3  the group has active members; nothing changed
  4  Kafka error before the commit; nothing changed, safe to retry
  5  partially applied: the result names the partitions that failed
  6  interrupted (SIGTERM, SIGINT, SIGHUP, SIGQUIT) before the commit; nothing changed
  7  refused by a guard (PlanStale, LimitExceeded, WouldSkipMessages); nothing changed
`)
}

// apply folds the Kafka-style aliases and repeated --topic flags into c.
// Two targets, or one twice, are refused by repeated before this.
// groupsInto sets the --group values: one is Group (the flag wins over
// REPLAY_GROUP), several are Groups. Load calls it even when it stops at
// a repeated flag, so that the failure is written as the run over several
// groups that was asked for.
func (a *targetAliases) groupsInto(c *Config) {
	switch {
	case len(a.groups) == 1:
		c.Group = a.groups[0]
	case len(a.groups) > 1:
		c.Group, c.Groups = "", a.groups
	}
}

func (a *targetAliases) apply(c *Config, fs *flag.FlagSet) *FieldError {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set[FlagTopic] {
		c.Topics = a.topics // flags win over REPLAY_TOPICS as a whole
	}
	a.groupsInto(c)
	type alias struct {
		name string
		to   func() (string, error)
	}
	aliases := []alias{
		{FlagToEarliest, func() (string, error) { return string(KindEarliest), nil }},
		{FlagToLatest, func() (string, error) { return string(KindLatest), nil }},
		{FlagToDatetime, func() (string, error) { return "time:" + a.datetime, nil }},
		{FlagToOffset, func() (string, error) { return "offset:" + a.offset, nil }},
		{FlagShiftBy, func() (string, error) {
			// As in Kafka, a number without a sign moves forward.
			n, err := strconv.ParseInt(a.shiftBy, 10, 64)
			if err != nil {
				return "", fmt.Errorf("%q is not a whole number (negative moves back, positive or unsigned forward)", a.shiftBy)
			}
			return fmt.Sprintf("shift:%+d", n), nil
		}},
		{FlagByDuration, func() (string, error) {
			d, err := parseAnyDuration(a.byDuration)
			if err != nil {
				return "", err
			}
			return "ago:" + d.String(), nil
		}},
		{FlagFromFile, func() (string, error) { return "file:" + a.fromFile, nil }},
	}
	if set[FlagExport] && a.export {
		c.Output = OutputCSV
	}
	for _, al := range aliases {
		// An alias switched off (--to-earliest=false) is not a target.
		off := (al.name == FlagToEarliest && !a.earliest) || (al.name == FlagToLatest && !a.latest)
		if !set[al.name] || off {
			continue
		}
		to, err := al.to()
		if err != nil {
			return &FieldError{Flag: al.name, Msg: err.Error()}
		}
		c.To, c.ToFlag = to, al.name
	}
	return nil
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// parseAnyDuration accepts a Go duration (2h30m) or the ISO-8601 form that
// kafka-consumer-groups.sh --by-duration takes (PT2H30M, P1DT2H).
func parseAnyDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	m := isoDuration.FindStringSubmatch(strings.ToUpper(s))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, fmt.Errorf("%q is neither a Go duration (2h) nor ISO-8601 (PT2H)", s)
	}
	// Sum in float64 and check the range: an integer product such as
	// 200000 days would silently wrap around time.Duration.
	var total float64
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	for i, u := range units {
		if m[i+1] != "" {
			f, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, fmt.Errorf("%q: %w", s, err)
			}
			total += f * float64(u)
		}
	}
	if total >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too long for a duration (at most %s)", s, time.Duration(math.MaxInt64))
	}
	return time.Duration(total), nil
}
