// Package request turns the plugin's flags into a ReplayRequest, one flag to
// one spec field. It is pure (a file: target's file is the only thing it
// reads) so that every mapping is a table test, and every error names the
// flag the user typed.
package request

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Flag names of `kubectl replay create` (and undo, for the ones it shares).
// They are the runner's own names where the runner has the setting
// (runner/config), so a shell user and a kubectl user type the same words.
const (
	FlagBootstrapServers       = config.FlagBootstrapServers // spec.kafka.bootstrapServers
	FlagConfigMap              = "config-map"                // spec.kafka.configMapRef.name
	FlagSecret                 = "secret"                    // spec.kafka.secretRef.name
	FlagGroup                  = config.FlagGroup            // spec.group
	FlagTopic                  = config.FlagTopic            // spec.topics
	FlagTo                     = config.FlagTo               // spec.target
	FlagDryRun                 = config.FlagDryRun           // spec.dryRun
	FlagApproval               = "approval"                  // spec.approval
	FlagApprovalTimeout        = "approval-timeout"          // spec.approvalTimeout
	FlagWaitForEmpty           = config.FlagWaitForEmpty     // spec.whenGroupActive: Wait + spec.waitTimeout
	FlagConsumers              = "consumers"                 // spec.consumers
	FlagConsumerRef            = "consumer-ref"              // spec.consumerRef
	FlagCluster                = "cluster"                   // spec.kafka.clusterRef.name and .listener
	FlagUser                   = "user"                      // spec.kafka.clusterRef.user
	FlagMaxMessagesToReconsume = "max-messages-to-reconsume" // spec.limits.maxMessagesToReconsume
	// FlagMaxTotalMessagesToReconsume is the guard over all groups of a
	// request over several, beside the per-group one.
	FlagMaxTotalMessagesToReconsume = "max-total-messages-to-reconsume" // spec.limits.maxTotalMessagesToReconsume
	FlagAllowSkip                   = "allow-skip"                      // spec.limits.allowSkip
	FlagForce                       = "force"                           // spec.force (undo only)
	FlagCommitMode                  = config.FlagCommitMode             // spec.commitMode
	FlagRunnerImage                 = "runner-image"                    // spec.runner.image
	FlagServiceAccount              = "service-account"                 // spec.runner.serviceAccountName
	FlagActiveDeadline              = "active-deadline"                 // spec.runner.activeDeadlineSeconds
	FlagGroupType                   = config.FlagGroupType              // spec.groupType
	// --group given more than once is spec.groups, as the runner and
	// Kafka's tool take it; the selector has no runner flag (the runner
	// takes --all-groups, the launcher a selector), so its flags are
	// named after the field, under --group.
	FlagGroupInclude       = "group-include"         // spec.groupSelector.include
	FlagGroupExclude       = "group-exclude"         // spec.groupSelector.exclude
	FlagGroupWithOffsetsOn = "group-with-offsets-on" // spec.groupSelector.withOffsetsOn
	// FlagAllGroups is Kafka's flag name (KIP-379), and the runner's: a
	// selector including every group (allGroupsPattern).
	FlagAllGroups       = config.FlagAllGroups       // spec.groupSelector.include: [{regex: ".*"}]
	FlagContinueOnError = config.FlagContinueOnError // spec.continueOnError
	FlagParallelism     = "parallelism"              // spec.parallelism
	// FlagDeleteAllInternalTopics is kafka-streams-groups.sh's flag name,
	// and the runner's.
	FlagDeleteAllInternalTopics = config.FlagDeleteAllInternalTopics // spec.deleteAllInternalTopics
)

// The API's bounds on a request over several groups (launcher/api).
const (
	maxGroups        = 500
	maxGroupPatterns = 50
	maxOffsetsTopics = 100
	maxParallelism   = 10
)

// Options are the flags of `kubectl replay create`, as typed.
type Options struct {
	Name      string
	Namespace string

	BootstrapServers string
	ConfigMap        string
	Secret           string
	// Groups are --group as given: one is spec.group, more spec.groups.
	Groups []string
	// GroupInclude, GroupExclude and GroupWithOffsetsOn are the
	// selector's flags (spec.groupSelector), instead of --group.
	GroupInclude []string
	// AllGroups is --all-groups: include every group.
	AllGroups          bool
	GroupExclude       []string
	GroupWithOffsetsOn []string
	ContinueOnError    bool
	// Parallelism is 0 when the flag was not given.
	Parallelism     int32
	GroupType       string
	Topics          []string
	To              string
	DryRun          bool
	Approval        string
	ApprovalTimeout time.Duration
	WaitForEmpty    time.Duration
	Consumers       []string
	// ConsumerRef is a Knative KIND/NAME whose group is replayed.
	ConsumerRef string
	// DeleteAllInternalTopics deletes a streams group's internal topics
	// once its offsets are moved.
	DeleteAllInternalTopics bool
	// Cluster is a Strimzi KAFKA/LISTENER; User a KafkaUser of it.
	Cluster string
	User    string
	// MaxMessagesToReconsume is nil when the flag was not given.
	MaxMessagesToReconsume *int64
	// MaxTotalMessagesToReconsume is nil when the flag was not given.
	MaxTotalMessagesToReconsume *int64
	AllowSkip                   bool
	// CommitMode is "" when the flag was not given: the runner's default.
	CommitMode     string
	RunnerImage    string
	ServiceAccount string
	ActiveDeadline time.Duration
}

// Build makes the request the flags describe. It checks what the API
// server's schema would refuse too, so that the error names the flag rather
// than the spec field, and nothing is sent that cannot be created.
func Build(o Options) (*v1alpha1.ReplayRequest, error) {
	var errs []error
	add := func(flag string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flag, err))
		}
	}
	rr := &v1alpha1.ReplayRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
	}
	if msgs := validation.IsDNS1123Subdomain(o.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("NAME %q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	spec := &rr.Spec

	ref, err := KnativeRef(o.ConsumerRef)
	if connector := o.ConsumerRef != "" && err == nil && ref.Kind == v1alpha1.ConsumerRefKafkaConnector; connector {
		// The group and the topics come from the connector, the cluster
		// from --cluster, which its KafkaConnect must connect to.
		spec.ConsumerRef = ref
		if o.Cluster == "" {
			add(FlagCluster, fmt.Errorf("is required with --%s %s: the Strimzi Kafka its KafkaConnect connects to, CLUSTER/LISTENER", FlagConsumerRef, o.ConsumerRef))
		} else {
			cref, err := ClusterRef(o.Cluster, o.User)
			add(FlagCluster, err)
			spec.Kafka.ClusterRef = cref
		}
		for _, f := range []struct {
			flag  string
			given bool
		}{{FlagBootstrapServers, o.BootstrapServers != ""}, {FlagConfigMap, o.ConfigMap != ""}, {FlagSecret, o.Secret != ""}, {FlagGroup, len(o.Groups) > 0}, {FlagGroupInclude, len(o.GroupInclude) > 0}, {FlagAllGroups, o.AllGroups}, {FlagTopic, len(o.Topics) > 0}} {
			if f.given {
				add(f.flag, fmt.Errorf("must not be given with --%s %s, which takes it from the connector, or from --%s", FlagConsumerRef, o.ConsumerRef, FlagCluster))
			}
		}
	} else if o.ConsumerRef != "" {
		// The launcher resolves servers, group and topics from the Knative
		// resource; giving them too is ambiguous.
		add(FlagConsumerRef, err)
		spec.ConsumerRef = ref
		for _, f := range []struct {
			flag  string
			given bool
		}{{FlagBootstrapServers, o.BootstrapServers != ""}, {FlagConfigMap, o.ConfigMap != ""}, {FlagSecret, o.Secret != ""}, {FlagGroup, len(o.Groups) > 0}, {FlagGroupInclude, len(o.GroupInclude) > 0}, {FlagAllGroups, o.AllGroups}, {FlagTopic, len(o.Topics) > 0}, {FlagCluster, o.Cluster != ""}, {FlagUser, o.User != ""}} {
			if f.given {
				add(f.flag, fmt.Errorf("must not be given with --%s, which takes it from the Knative resource", FlagConsumerRef))
			}
		}
	} else {
		if o.Cluster != "" {
			ref, err := ClusterRef(o.Cluster, o.User)
			add(FlagCluster, err)
			spec.Kafka.ClusterRef = ref
			if o.BootstrapServers != "" {
				add(FlagBootstrapServers, fmt.Errorf("must not be given with --%s, which takes them from the Kafka's listener", FlagCluster))
			}
			if o.Secret != "" {
				add(FlagSecret, fmt.Errorf("must not be given with --%s: --%s names the KafkaUser whose Secret holds the credentials", FlagCluster, FlagUser))
			}
		} else if o.User != "" {
			add(FlagUser, fmt.Errorf("is a KafkaUser of the --%s cluster, and needs it", FlagCluster))
		}
		if o.BootstrapServers == "" && o.Cluster == "" {
			add(FlagBootstrapServers, fmt.Errorf("is required (or --%s, or --%s): the Kafka bootstrap list, host:port[,host:port...]", FlagCluster, FlagConsumerRef))
		} else if o.BootstrapServers != "" {
			add(FlagBootstrapServers, config.ValidateBootstrapServers(o.BootstrapServers))
		}
		groups(o, spec, add)
	}
	if spec.Group == "" && len(spec.Groups) == 0 && spec.GroupSelector == nil {
		// A consumerRef's group, or none given: the selector's other
		// flags and continueOnError have nothing to apply to.
		if len(o.GroupExclude) > 0 || len(o.GroupWithOffsetsOn) > 0 {
			add(FlagGroupInclude, fmt.Errorf("is required with --%s and --%s: the groups they narrow", FlagGroupExclude, FlagGroupWithOffsetsOn))
		}
		if o.ContinueOnError {
			add(FlagContinueOnError, fmt.Errorf("applies to a request over several groups (--%s given more than once, or --%s)", FlagGroup, FlagGroupInclude))
		}
		if o.Parallelism != 0 {
			add(FlagParallelism, fmt.Errorf("applies to a request over several groups (--%s given more than once, or --%s)", FlagGroup, FlagGroupInclude))
		}
		if o.MaxTotalMessagesToReconsume != nil {
			add(FlagMaxTotalMessagesToReconsume, fmt.Errorf("applies to a request over several groups (--%s given more than once, or --%s)", FlagGroup, FlagGroupInclude))
		}
	}
	spec.Kafka.BootstrapServers = o.BootstrapServers
	if o.ConfigMap != "" {
		add(FlagConfigMap, objectName(o.ConfigMap))
		spec.Kafka.ConfigMapRef = &v1alpha1.LocalObjectReference{Name: o.ConfigMap}
	}
	if o.Secret != "" {
		add(FlagSecret, objectName(o.Secret))
		spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: o.Secret}
	}
	if o.GroupType != "" {
		if !slices.Contains(config.GroupTypes, o.GroupType) {
			add(FlagGroupType, fmt.Errorf("%q is not one of %s", o.GroupType, strings.Join(config.GroupTypes, ", ")))
		}
		spec.GroupType = v1alpha1.GroupType(o.GroupType)
	}

	if o.DeleteAllInternalTopics {
		// The API server's rules, said in the plugin's words.
		switch {
		case o.GroupType != "" && o.GroupType != config.GroupTypeAuto && o.GroupType != config.GroupTypeStreams:
			add(FlagDeleteAllInternalTopics, fmt.Errorf("only a streams group has internal topics to delete, and --%s says %s", FlagGroupType, o.GroupType))
		case o.ConsumerRef != "":
			add(FlagDeleteAllInternalTopics, fmt.Errorf("a --%s's group is a consumer group, never a streams group", FlagConsumerRef))
		case len(o.Groups) > 1 || len(o.GroupInclude) > 0:
			add(FlagDeleteAllInternalTopics, fmt.Errorf("deletes the internal topics of one streams group: give one --%s", FlagGroup))
		}
		spec.DeleteAllInternalTopics = true
	}

	topics, err := Topics(o.Topics)
	add(FlagTopic, err)
	spec.Topics = topics

	if o.To == "" {
		add(FlagTo, errors.New("is required: earliest, latest, time:<RFC3339>, ago:<duration>, offset:<N>, shift:<+N|-N>, file:<path> or group:<name>"))
	} else {
		t, err := Target(o.To)
		add(FlagTo, err)
		spec.Target = t
	}
	if spec.Target.FromGroup != nil && slices.Contains(o.Groups, *spec.Target.FromGroup) {
		which := "the group"
		if len(o.Groups) > 1 {
			which = "one of the groups"
		}
		add(FlagTo, fmt.Errorf("group:%s names %s being moved; copy from another group", *spec.Target.FromGroup, which))
	}
	if len(spec.Target.Offsets) > 0 && len(spec.Topics) > 0 {
		add(FlagTopic, errors.New("must not be given with --to file:, whose offsets already choose the partitions"))
	}

	spec.DryRun = o.DryRun
	switch o.Approval {
	case "", string(v1alpha1.ApprovalAutomatic):
		spec.Approval = v1alpha1.ApprovalAutomatic
	case string(v1alpha1.ApprovalManual):
		spec.Approval = v1alpha1.ApprovalManual
		if o.DryRun {
			add(FlagApproval, fmt.Errorf("%s already plans before applying; --%s has nothing to approve", v1alpha1.ApprovalManual, FlagDryRun))
		}
	default:
		add(FlagApproval, fmt.Errorf("%q is not Automatic or Manual", o.Approval))
	}
	if o.ApprovalTimeout != 0 {
		switch {
		case spec.Approval != v1alpha1.ApprovalManual:
			add(FlagApprovalTimeout, fmt.Errorf("needs --%s Manual", FlagApproval))
		case o.ApprovalTimeout < 0 || o.ApprovalTimeout > 168*time.Hour:
			add(FlagApprovalTimeout, fmt.Errorf("%s must be positive and at most 168h", o.ApprovalTimeout))
		default:
			spec.ApprovalTimeout = &metav1.Duration{Duration: o.ApprovalTimeout}
		}
	}

	spec.WhenGroupActive = v1alpha1.GroupActiveFail
	if o.WaitForEmpty != 0 {
		if o.WaitForEmpty < 0 || o.WaitForEmpty > 24*time.Hour {
			add(FlagWaitForEmpty, fmt.Errorf("%s must be positive and at most 24h", o.WaitForEmpty))
		}
		spec.WhenGroupActive = v1alpha1.GroupActiveWait
		spec.WaitTimeout = &metav1.Duration{Duration: o.WaitForEmpty}
	}

	consumers, err := Consumers(o.Consumers)
	add(FlagConsumers, err)
	spec.Consumers = consumers
	if len(consumers) > 0 && o.WaitForEmpty == 0 {
		add(FlagConsumers, fmt.Errorf("need --%s: the runner waits, bounded by it, for the paused consumers to leave the group", FlagWaitForEmpty))
	}

	if o.MaxMessagesToReconsume != nil || o.MaxTotalMessagesToReconsume != nil || o.AllowSkip {
		spec.Limits = &v1alpha1.Limits{AllowSkip: o.AllowSkip}
		if o.MaxMessagesToReconsume != nil {
			if *o.MaxMessagesToReconsume < 0 {
				add(FlagMaxMessagesToReconsume, fmt.Errorf("%d is negative", *o.MaxMessagesToReconsume))
			}
			n := *o.MaxMessagesToReconsume
			spec.Limits.MaxMessagesToReconsume = &n
		}
		if o.MaxTotalMessagesToReconsume != nil {
			if *o.MaxTotalMessagesToReconsume < 0 {
				add(FlagMaxTotalMessagesToReconsume, fmt.Errorf("%d is negative", *o.MaxTotalMessagesToReconsume))
			}
			n := *o.MaxTotalMessagesToReconsume
			spec.Limits.MaxTotalMessagesToReconsume = &n
		}
	}
	if skips(spec.Target) && !o.AllowSkip {
		add(FlagTo, fmt.Errorf("%s moves the group past messages its consumers never handled; add --%s to allow that", o.To, FlagAllowSkip))
	}

	mode, err := CommitMode(o.CommitMode)
	add(FlagCommitMode, err)
	spec.CommitMode = mode

	if o.RunnerImage != "" || o.ServiceAccount != "" || o.ActiveDeadline != 0 {
		spec.Runner = &v1alpha1.RunnerOverrides{Image: o.RunnerImage, ServiceAccountName: o.ServiceAccount}
		if o.ServiceAccount != "" {
			add(FlagServiceAccount, objectName(o.ServiceAccount))
		}
		if o.ActiveDeadline != 0 {
			s := int64(o.ActiveDeadline / time.Second)
			if o.ActiveDeadline%time.Second != 0 || s < 1 || s > 604800 {
				add(FlagActiveDeadline, fmt.Errorf("%s must be whole seconds from 1s to 168h", o.ActiveDeadline))
			}
			spec.Runner.ActiveDeadlineSeconds = &s
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rr, nil
}

// groups maps --group (once: spec.group; more: spec.groups), the
// selector's flags (spec.groupSelector) and --continue-on-error.
func groups(o Options, spec *v1alpha1.ReplayRequestSpec, add func(string, error)) {
	selecting := len(o.GroupInclude) > 0 || len(o.GroupExclude) > 0 || len(o.GroupWithOffsetsOn) > 0 || o.AllGroups
	switch {
	case len(o.Groups) > 0 && selecting:
		add(FlagGroup, fmt.Errorf("conflicts with --%s, --%s, --%s and --%s: name the groups, or select them", FlagGroupInclude, FlagAllGroups, FlagGroupExclude, FlagGroupWithOffsetsOn))
		return
	case len(o.Groups) == 0 && !selecting:
		add(FlagGroup, fmt.Errorf("is required (or --%s, --%s, or --%s): the consumer group to move; repeat it for several", FlagGroupInclude, FlagAllGroups, FlagConsumerRef))
		return
	case len(o.Groups) == 1:
		add(FlagGroup, config.ValidateGroup(o.Groups[0]))
		spec.Group = o.Groups[0]
		if o.ContinueOnError {
			add(FlagContinueOnError, fmt.Errorf("applies to a request over several groups; this one has one --%s", FlagGroup))
		}
		if o.Parallelism != 0 {
			add(FlagParallelism, fmt.Errorf("applies to a request over several groups; this one has one --%s", FlagGroup))
		}
		if o.MaxTotalMessagesToReconsume != nil {
			add(FlagMaxTotalMessagesToReconsume, fmt.Errorf("applies to a request over several groups; this one has one --%s, whose total --%s bounds", FlagGroup, FlagMaxMessagesToReconsume))
		}
		return
	case len(o.Groups) > maxGroups:
		add(FlagGroup, fmt.Errorf("given %d times; a request takes at most %d groups: split it into several requests", len(o.Groups), maxGroups))
	}
	seen := map[string]bool{}
	for _, g := range o.Groups {
		if err := config.ValidateGroup(g); err != nil {
			add(FlagGroup, fmt.Errorf("%q: %w", g, err))
		} else if seen[g] {
			add(FlagGroup, fmt.Errorf("%q is given twice", g))
		}
		seen[g] = true
	}
	spec.Groups = o.Groups
	spec.ContinueOnError = o.ContinueOnError
	if o.Parallelism != 0 {
		if o.Parallelism < 1 || o.Parallelism > maxParallelism {
			add(FlagParallelism, fmt.Errorf("%d must be from 1 to %d", o.Parallelism, maxParallelism))
		}
		if len(o.Consumers) > 0 && o.Parallelism > 1 {
			// Two groups' requests would pause the same workloads at once,
			// the second recording the first's pause as their replicas.
			add(FlagParallelism, fmt.Errorf("must be 1 with --%s: each group's request pauses the same workloads", FlagConsumers))
		}
		spec.Parallelism = o.Parallelism
	}
	if !selecting {
		return
	}
	if o.Cluster != "" {
		add(FlagCluster, fmt.Errorf("selecting the groups (--%s, --%s) with --%s is not built: give --%s and --%s, or name the groups with --%s", FlagGroupInclude, FlagAllGroups, FlagCluster, FlagBootstrapServers, FlagSecret, FlagGroup))
	}
	sel := &v1alpha1.GroupSelector{}
	switch {
	case o.AllGroups && len(o.GroupInclude) > 0:
		add(FlagAllGroups, fmt.Errorf("conflicts with --%s: --%s includes every group", FlagGroupInclude, FlagAllGroups))
	case o.AllGroups:
		// Every consumer group the cluster lists when the request is
		// accepted, as the runner's --all-groups takes them; the
		// exclusions and withOffsetsOn narrow it as any selector.
		sel.Include = []v1alpha1.GroupPattern{{Regex: AllGroupsPattern}}
	case len(o.GroupInclude) == 0:
		add(FlagGroupInclude, fmt.Errorf("is required with --%s and --%s (or --%s): the groups they narrow", FlagGroupExclude, FlagGroupWithOffsetsOn, FlagAllGroups))
	}
	for _, f := range []struct {
		flag string
		in   []string
		out  *[]v1alpha1.GroupPattern
	}{{FlagGroupInclude, o.GroupInclude, &sel.Include}, {FlagGroupExclude, o.GroupExclude, &sel.Exclude}} {
		if len(f.in) > maxGroupPatterns {
			add(f.flag, fmt.Errorf("given %d times; a request takes at most %d", len(f.in), maxGroupPatterns))
		}
		for _, s := range f.in {
			p, err := GroupPattern(s)
			add(f.flag, err)
			*f.out = append(*f.out, p)
		}
	}
	if len(o.GroupWithOffsetsOn) > maxOffsetsTopics {
		add(FlagGroupWithOffsetsOn, fmt.Errorf("given %d times; a request takes at most %d topics", len(o.GroupWithOffsetsOn), maxOffsetsTopics))
	}
	seen = map[string]bool{}
	for _, t := range o.GroupWithOffsetsOn {
		if err := config.ValidateTopic(t); err != nil {
			add(FlagGroupWithOffsetsOn, err)
		} else if seen[t] {
			add(FlagGroupWithOffsetsOn, fmt.Errorf("%q is given twice", t))
		}
		seen[t] = true
	}
	sel.WithOffsetsOn = o.GroupWithOffsetsOn
	spec.GroupSelector = sel
}

// AllGroupsPattern is --all-groups's include: every name.
const AllGroupsPattern = ".*"

// GroupPattern maps one --group-include or --group-exclude value onto a
// spec.groupSelector pattern: regex:RE is a regular expression (RE2, as
// Go and the launcher read it) of the whole name; prefix:P, or any other
// value, a prefix. prefix: is there for a prefix that itself starts with
// "regex:".
func GroupPattern(s string) (v1alpha1.GroupPattern, error) {
	if re, ok := strings.CutPrefix(s, "regex:"); ok {
		switch {
		case re == "":
			return v1alpha1.GroupPattern{}, fmt.Errorf("%q: the regular expression is empty", s)
		case len(re) > 1024:
			return v1alpha1.GroupPattern{}, fmt.Errorf("the regular expression is %d bytes; at most 1024", len(re))
		}
		if _, err := regexp.Compile(`^(?:` + re + `)$`); err != nil {
			return v1alpha1.GroupPattern{}, fmt.Errorf("%q is not a regular expression (RE2): %w", re, err)
		}
		return v1alpha1.GroupPattern{Regex: re}, nil
	}
	prefix := strings.TrimPrefix(s, "prefix:")
	if prefix == "" {
		return v1alpha1.GroupPattern{}, fmt.Errorf("%q: the prefix is empty", s)
	}
	if err := config.ValidateGroup(prefix); err != nil {
		return v1alpha1.GroupPattern{}, fmt.Errorf("prefix %q: %w", prefix, err)
	}
	return v1alpha1.GroupPattern{Prefix: prefix}, nil
}

// CommitMode checks a --commit-mode value against the runner's modes
// (spelled as the runner and the CRD's enum spell them); "" is none given.
func CommitMode(m string) (v1alpha1.CommitMode, error) {
	if m != "" && !slices.Contains(config.CommitModes, m) {
		return "", fmt.Errorf("%q is not one of %s", m, strings.Join(config.CommitModes, ", "))
	}
	return v1alpha1.CommitMode(m), nil
}

// skips reports whether a target always moves the group forward, which the
// schema refuses without limits.allowSkip.
func skips(t v1alpha1.Target) bool {
	return (t.Position != nil && *t.Position == v1alpha1.PositionLatest) || (t.ShiftBy != nil && *t.ShiftBy > 0)
}

// ClusterRef maps --cluster KAFKA/LISTENER and --user NAME onto
// spec.kafka.clusterRef.
func ClusterRef(cluster, user string) (*v1alpha1.StrimziClusterRef, error) {
	name, listener, ok := strings.Cut(cluster, "/")
	if !ok || name == "" || listener == "" {
		return nil, fmt.Errorf("%q is not KAFKA/LISTENER, such as my-cluster/tls", cluster)
	}
	if err := objectName(name); err != nil {
		return nil, err
	}
	if !strimziListenerName.MatchString(listener) {
		return nil, fmt.Errorf("listener %q is not a Strimzi listener name (1-11 lowercase letters and digits)", listener)
	}
	if user != "" {
		if err := objectName(user); err != nil {
			return nil, fmt.Errorf("--%s: %w", FlagUser, err)
		}
	}
	return &v1alpha1.StrimziClusterRef{Name: name, Listener: listener, User: user}, nil
}

// strimziListenerName is Strimzi's rule for a listener's name
// (GenericKafkaListener), as spec.kafka.clusterRef.listener holds it.
var strimziListenerName = regexp.MustCompile(`^[a-z0-9]{1,11}$`)

func objectName(s string) error {
	if msgs := validation.IsDNS1123Subdomain(s); len(msgs) > 0 {
		return fmt.Errorf("%q: %s", s, strings.Join(msgs, "; "))
	}
	return nil
}

// Target maps the runner's target grammar (runner/config.ParseTarget) onto
// spec.target. A file: target's offsets are read here and sent inline
// (spec.target.offsets): the launcher never reads the user's files. plan:
// and undo: are the launcher's own (`kubectl replay approve`, `kubectl
// replay undo`).
func Target(to string) (v1alpha1.Target, error) {
	// Refused before parsing, which would read the file.
	if kind, _, _ := strings.Cut(strings.TrimSpace(to), ":"); strings.EqualFold(kind, string(config.KindPlan)) || strings.EqualFold(kind, string(config.KindUndo)) {
		return v1alpha1.Target{}, fmt.Errorf("%s: a request cannot name a %s: target; use `kubectl replay undo NAME` to undo, `kubectl replay approve NAME` to apply a plan", to, strings.ToLower(kind))
	}
	t, err := config.ParseTarget(to)
	if err != nil {
		return v1alpha1.Target{}, err
	}
	var out v1alpha1.Target
	switch t.Kind {
	case config.KindEarliest:
		p := v1alpha1.PositionEarliest
		out.Position = &p
	case config.KindLatest:
		p := v1alpha1.PositionLatest
		out.Position = &p
	case config.KindTime:
		// The canonical RFC3339 form keeps the zone as given (a time in
		// Unix milliseconds becomes UTC): the schema takes no other.
		s := t.Time.Format(time.RFC3339Nano)
		out.Time = &s
	case config.KindAgo:
		out.Ago = &metav1.Duration{Duration: t.Ago}
	case config.KindOffset:
		n := t.Offset
		out.Offset = &n
	case config.KindShift:
		n := t.Shift
		out.ShiftBy = &n
	case config.KindFile:
		for _, o := range t.Offsets {
			out.Offsets = append(out.Offsets, v1alpha1.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
		}
		slices.SortFunc(out.Offsets, func(a, b v1alpha1.PartitionOffset) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition) - int(b.Partition)
		})
		if len(out.Offsets) > 2000 {
			return v1alpha1.Target{}, fmt.Errorf("file: %s lists %d partitions; a request takes at most 2000: split it into several requests", t.File, len(out.Offsets))
		}
		// The schema's bound, for the pod annotation the offsets travel in.
		if n := replay.OffsetsAnnotationBytes(out.Offsets); n > replay.MaxOffsetsAnnotationBytes {
			return v1alpha1.Target{}, fmt.Errorf("file: %s is %d bytes as a request's offsets, more than the %d a request takes: split it into several requests", t.File, n, replay.MaxOffsetsAnnotationBytes)
		}
	case config.KindGroup:
		g := t.Group
		out.FromGroup = &g
	default:
		return v1alpha1.Target{}, fmt.Errorf("%s: a request cannot name a %s: target; use `kubectl replay undo NAME` to undo, `kubectl replay approve NAME` to apply a plan", to, t.Kind)
	}
	return out, nil
}

// Topics maps --topic entries (orders, orders:0,1, orders:0-3) onto
// spec.topics, sorted by name.
func Topics(entries []string) ([]v1alpha1.TopicSelector, error) {
	s, err := config.ParseScope(entries)
	if err != nil {
		return nil, err
	}
	var out []v1alpha1.TopicSelector
	for _, name := range s.TopicNames() {
		out = append(out, v1alpha1.TopicSelector{Name: name, Partitions: s.Topics[name]})
	}
	return out, nil
}

// knativeKinds are the names kubectl users type for each Knative kind.
var knativeKinds = map[string]v1alpha1.KnativeKind{
	"kafkasource": v1alpha1.KnativeKafkaSource, "kafkasources": v1alpha1.KnativeKafkaSource,
	"kafkasource.sources.knative.dev": v1alpha1.KnativeKafkaSource, "kafkasources.sources.knative.dev": v1alpha1.KnativeKafkaSource,
	"trigger": v1alpha1.KnativeTrigger, "triggers": v1alpha1.KnativeTrigger,
	"trigger.eventing.knative.dev": v1alpha1.KnativeTrigger, "triggers.eventing.knative.dev": v1alpha1.KnativeTrigger,
	"subscription": v1alpha1.KnativeSubscription, "subscriptions": v1alpha1.KnativeSubscription, "sub": v1alpha1.KnativeSubscription,
	"subscription.messaging.knative.dev": v1alpha1.KnativeSubscription, "subscriptions.messaging.knative.dev": v1alpha1.KnativeSubscription,
	"kafkaconnector": v1alpha1.ConsumerRefKafkaConnector, "kafkaconnectors": v1alpha1.ConsumerRefKafkaConnector, "kctr": v1alpha1.ConsumerRefKafkaConnector,
	"kafkaconnector.kafka.strimzi.io": v1alpha1.ConsumerRefKafkaConnector, "kafkaconnectors.kafka.strimzi.io": v1alpha1.ConsumerRefKafkaConnector,
}

// KnativeRef maps --consumer-ref KIND/NAME (kafkasource/orders,
// trigger/orders, subscription/orders, kafkaconnector/orders-sink) onto
// spec.consumerRef.
func KnativeRef(s string) (*v1alpha1.KnativeRef, error) {
	kind, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	k, known := knativeKinds[strings.ToLower(kind)]
	if !ok || !known {
		return nil, fmt.Errorf("%q is not KIND/NAME with KIND kafkasource, trigger, subscription or kafkaconnector", s)
	}
	if err := objectName(name); err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return &v1alpha1.KnativeRef{Kind: k, Name: name}, nil
}

// consumerKinds are the resource names kubectl users type for each kind.
var consumerKinds = map[string]v1alpha1.ConsumerKind{
	"deploy": v1alpha1.ConsumerDeployment, "deployment": v1alpha1.ConsumerDeployment,
	"deployments": v1alpha1.ConsumerDeployment, "deployment.apps": v1alpha1.ConsumerDeployment,
	"deployments.apps": v1alpha1.ConsumerDeployment,
	"sts":              v1alpha1.ConsumerStatefulSet, "statefulset": v1alpha1.ConsumerStatefulSet,
	"statefulsets": v1alpha1.ConsumerStatefulSet, "statefulset.apps": v1alpha1.ConsumerStatefulSet,
	"statefulsets.apps": v1alpha1.ConsumerStatefulSet,
	"so":                v1alpha1.ConsumerScaledObject, "scaledobject": v1alpha1.ConsumerScaledObject,
	"scaledobjects": v1alpha1.ConsumerScaledObject, "scaledobject.keda.sh": v1alpha1.ConsumerScaledObject,
	"scaledobjects.keda.sh": v1alpha1.ConsumerScaledObject,
	"kafkaconnector":        v1alpha1.ConsumerKafkaConnector, "kafkaconnectors": v1alpha1.ConsumerKafkaConnector,
	"kctr": v1alpha1.ConsumerKafkaConnector, "kafkaconnector.kafka.strimzi.io": v1alpha1.ConsumerKafkaConnector,
	"kafkaconnectors.kafka.strimzi.io": v1alpha1.ConsumerKafkaConnector,
}

// Consumers maps --consumers entries, kubectl's KIND/NAME (deploy/orders,
// sts/billing, scaledobject/orders; comma-separated or repeated), onto
// spec.consumers.
func Consumers(entries []string) ([]v1alpha1.ConsumerRef, error) {
	var out []v1alpha1.ConsumerRef
	seen := map[v1alpha1.ConsumerRef]bool{}
	for _, e := range entries {
		for _, item := range strings.Split(e, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			kind, name, ok := strings.Cut(item, "/")
			k, known := consumerKinds[strings.ToLower(kind)]
			if !ok || !known {
				return nil, fmt.Errorf("%q is not KIND/NAME with KIND deploy, sts or scaledobject", item)
			}
			if err := objectName(name); err != nil {
				return nil, fmt.Errorf("%q: %w", item, err)
			}
			ref := v1alpha1.ConsumerRef{Kind: k, Name: name}
			if seen[ref] {
				return nil, fmt.Errorf("%q is named twice", item)
			}
			seen[ref] = true
			out = append(out, ref)
		}
	}
	if len(out) > 16 {
		return nil, fmt.Errorf("%d consumers; a request takes at most 16", len(out))
	}
	return out, nil
}
