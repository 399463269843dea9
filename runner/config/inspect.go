package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

// The read-only modes, named as kafka-consumer-groups.sh names them: --list
// lists the groups, --describe describes some (--group, repeatable) or all
// (--all-groups). They change nothing and take no target. A run takes
// --all-groups too: it moves every consumer group the cluster lists
// (KIP-379; see groups.go).
const (
	FlagList      = "list"
	FlagDescribe  = "describe"
	FlagAllGroups = "all-groups"
)

// Inspect is the configuration of a --list or a --describe.
type Inspect struct {
	// Describe is --describe; false is --list.
	Describe bool
	// Groups are the --group values, in order, once each; empty with
	// AllGroups and for a --list.
	Groups    []string
	AllGroups bool
	Output    string
	// Conn holds the connection settings, validated and loaded as a
	// run's are (Conn.KafkaProperties, Conn.Timeout).
	Conn *Config
}

// IsInspect says whether args ask for --list or --describe, or the
// environment for a list (REPLAY_LIST), which Main serves instead of a
// run. A REPLAY_LIST that is not a boolean counts as asking, so that
// LoadInspect refuses it by name rather than a run ignoring it.
func IsInspect(args []string) bool {
	if v := os.Getenv(EnvList); v != "" {
		if on, err := strconv.ParseBool(v); err != nil || on {
			return true
		}
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == FlagList || name == FlagDescribe) {
			return true
		}
	}
	return false
}

// inspectConnFlags are the run's flags a --list or --describe takes too,
// with the same meaning and environment variables.
// The binding's (--cluster-id, --properties-digest, --ca-digest) among
// them: a listing of a clusterRef's Kafka (kubectl replay groups --cluster)
// is refused on another cluster, or with other properties, as its run is.
var inspectConnFlags = []string{FlagBootstrapServers, FlagBootstrapServerAlias, FlagKafkaConfigDir, FlagKafkaSecretDir,
	FlagAllowUnsafeProperties, FlagAllowUnboundSecret, FlagClusterID, FlagPropertiesDigest, FlagCADigest,
	FlagTimeout, FlagOutput, FlagFieldNames, FlagResultFile}

// LoadInspect reads a --list or --describe from the environment (the
// connection's REPLAY_* variables) and args. Every error names its flag.
func LoadInspect(args []string, stderr io.Writer) (*Inspect, error) {
	c := &Config{Output: OutputTable}
	if err := envconfig.Process("", c); err != nil {
		return nil, Errors{envError(err)}
	}
	var env struct {
		List bool `envconfig:"REPLAY_LIST"`
	}
	if err := envconfig.Process("", &env); err != nil {
		return nil, Errors{envError(err)}.named(c.FieldNames)
	}
	in := &Inspect{Conn: c}
	// The connection flags are the run's own: their usage is read from
	// the run's flag set, so it is written once.
	run, _ := (&Config{}).flagSet(io.Discard)
	fs := flag.NewFlagSet("kafka-replay-runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list, describe := env.List, false
	fs.BoolVar(&list, FlagList, list, "list the groups: kind, state, member count and topics (read-only)")
	fs.BoolVar(&describe, FlagDescribe, false, "describe groups: members (client ID, host) and, per partition, committed offset, log end and lag (read-only)")
	fs.BoolVar(&in.AllGroups, FlagAllGroups, false, "with --describe, every group")
	fs.Func(FlagGroup, "with --describe, a group to describe; repeatable", func(v string) error {
		if !slices.Contains(in.Groups, v) {
			in.Groups = append(in.Groups, v)
		}
		return nil
	})
	for _, n := range inspectConnFlags {
		f := run.Lookup(n)
		switch n {
		case FlagBootstrapServers, FlagBootstrapServerAlias:
			fs.StringVar(&c.BootstrapServers, n, c.BootstrapServers, f.Usage)
		case FlagKafkaConfigDir:
			fs.StringVar(&c.KafkaConfigDir, n, c.KafkaConfigDir, f.Usage)
		case FlagKafkaSecretDir:
			fs.StringVar(&c.KafkaSecretDir, n, c.KafkaSecretDir, f.Usage)
		case FlagAllowUnsafeProperties:
			fs.Var(&c.AllowUnsafeProperties, n, f.Usage)
		case FlagAllowUnboundSecret:
			fs.BoolVar(&c.AllowUnboundSecret, n, c.AllowUnboundSecret, f.Usage)
		case FlagClusterID:
			fs.StringVar(&c.ClusterID, n, c.ClusterID, f.Usage)
		case FlagPropertiesDigest:
			fs.StringVar(&c.PropertiesDigest, n, c.PropertiesDigest, f.Usage)
		case FlagCADigest:
			fs.StringVar(&c.CADigest, n, c.CADigest, f.Usage)
		case FlagTimeout:
			fs.DurationVar(&c.Timeout, n, c.Timeout, f.Usage)
		case FlagOutput:
			fs.StringVar(&c.Output, n, c.Output, "stdout format: table, or json (the listing of runner/report.Groups)")
		case FlagFieldNames:
			fs.Func(n, f.Usage, func(v string) error { c.FieldNames = FieldNames(v); return nil })
		case FlagResultFile:
			fs.StringVar(&c.ResultFile, n, c.ResultFile, "also write the JSON listing (runner/report.Groups) here, and a compact one to the termination message ("+EnvTerminationMessagePath+")")
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, Errors{{Msg: err.Error() + " (--list and --describe take the connection flags, --group and --all-groups)"}}
	}
	in.Describe, in.Output = describe, c.Output
	var errs Errors
	bad := func(flagName, env, format string, a ...any) {
		errs = append(errs, &FieldError{Flag: flagName, Env: env, Msg: fmt.Sprintf(format, a...)})
	}
	if fs.NArg() > 0 {
		bad("", "", "unexpected argument %q; every setting is a --flag", fs.Arg(0))
	}
	switch {
	case list && describe:
		bad(FlagList, EnvList, "conflicts with --%s: give one of them", FlagDescribe)
	case list && (len(in.Groups) > 0 || in.AllGroups):
		bad(FlagList, EnvList, "lists every group; to see some, use --%s --%s <name> (or --%s)", FlagDescribe, FlagGroup, FlagAllGroups)
	case describe && len(in.Groups) > 0 && in.AllGroups:
		bad(FlagAllGroups, "", "conflicts with --%s: give one of them", FlagGroup)
	case describe && len(in.Groups) == 0 && !in.AllGroups:
		bad(FlagGroup, "", "--%s needs --%s <name> (repeatable) or --%s", FlagDescribe, FlagGroup, FlagAllGroups)
	}
	for _, g := range in.Groups {
		if err := ValidateGroup(g); err != nil {
			bad(FlagGroup, "", "%q %v", g, err)
		}
	}
	if names, err := ParseFieldNames(string(c.FieldNames)); err != nil {
		bad(FlagFieldNames, EnvFieldNames, "%v", err)
	} else {
		c.FieldNames = names
	}
	if err := ValidateBootstrapServers(c.BootstrapServers); err != nil {
		bad(FlagBootstrapServers, EnvBootstrapServers, "%v", err)
	}
	if c.Output != OutputTable && c.Output != OutputJSON {
		bad(FlagOutput, EnvOutput, "%q is not one of table, json", c.Output)
	}
	if c.Timeout <= 0 {
		bad(FlagTimeout, EnvTimeout, "must be positive, got %s", c.Timeout)
	}
	if c.ResultFile != "" {
		if err := checkWritableDir(filepath.Dir(c.ResultFile)); err != nil {
			bad(FlagResultFile, EnvResultFile, "%v", err)
		}
	}
	c.validateConnection(bad, &errs)
	if len(errs) > 0 {
		return in, errs.named(c.FieldNames)
	}
	return in, nil
}
