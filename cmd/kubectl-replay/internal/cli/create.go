package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// waitFlags are --wait and its --timeout, on every verb that starts or
// unblocks a run.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

func (w *waitFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.wait, "wait", false, "follow the request to its end with a live display of its steps, then exit with its outcome (see the exit codes)")
	cmd.Flags().DurationVar(&w.timeout, "timeout", 0, "with --wait, give up following after this long (exit 6; the request goes on); 0 waits as long as it takes")
}

func (a *app) createCommand() *cobra.Command {
	var o request.Options
	var maxReconsume, maxTotal int64
	var output string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "create NAME --bootstrap-servers HOST:PORT --group GROUP --to TARGET [flags]",
		Short: "Create a ReplayRequest: move a group's offsets to a target, once",
		Long: `Create a ReplayRequest. Each flag sets one field of its spec, and --to takes
the runner's target grammar:

  earliest | latest                      spec.target.position
  time:<RFC3339 with a zone>|<Unix ms>   spec.target.time
  ago:<Go duration>                      spec.target.ago (resolved on acceptance)
  offset:<N>                             spec.target.offset
  shift:<+N|-N>                          spec.target.shiftBy
  file:<path>                            spec.target.offsets, read from the JSON file here
  group:<other group>                    spec.target.fromGroup

latest and a positive shift skip messages the consumers never handled and need
--allow-skip. -o yaml prints the request without creating it.

Several groups: --group repeated, or --group-include or --all-groups (with
--group-exclude and --group-with-offsets-on) to select them by name when the
request is accepted; groups that appear later are not added.
Each group is moved by a child request of its own (its own lock, run ID,
record and undo), under one plan and one approval of this request.`,
		Example: `  # Rewind orders-service's offsets on orders partitions 0 and 1 to 09:30 CET
  kubectl replay create orders-rewind -n shop --bootstrap-servers kafka-0.kafka:9092 \
    --group orders-service --topic orders:0,1 --to time:2026-03-01T09:30:00+01:00 --wait

  # Plan, review, then apply: pause the consumers meanwhile
  kubectl replay create orders-rewind --bootstrap-servers kafka:9092 --group orders-service \
    --to ago:2h --approval Manual --consumers deploy/orders --wait-for-empty 5m --wait

  # Three groups, one plan, one approval; go on past a failed group
  kubectl replay create incident-42 --bootstrap-servers kafka:9092 --group billing \
    --group audit --group search --to time:2026-03-01T09:30:00Z --approval Manual --continue-on-error

  # Every group of team X reading orders, but the canary
  kubectl replay create incident-43 --bootstrap-servers kafka:9092 --group-include team-x- \
    --group-exclude regex:.*-canary --group-with-offsets-on orders --to ago:2h --approval Manual

  # Print the request for Git instead of creating it
  kubectl replay create orders-rewind --bootstrap-servers kafka:9092 --group orders-service \
    --to shift:-100 -o yaml`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			o.Name = args[0]
			if cmd.Flags().Changed(request.FlagMaxMessagesToReconsume) {
				o.MaxMessagesToReconsume = &maxReconsume
			}
			if cmd.Flags().Changed(request.FlagMaxTotalMessagesToReconsume) {
				o.MaxTotalMessagesToReconsume = &maxTotal
			}
			if output != "" && w.wait {
				return exit.Errorf(exit.Usage, "--output prints the request without creating it; it does not go with --wait")
			}
			if cmd.Flags().Changed("bootstrap-server") && cmd.Flags().Changed(request.FlagBootstrapServers) {
				return exit.Errorf(exit.Usage, "--bootstrap-server is an alias of --bootstrap-servers: give one of them")
			}
			// -o without -n leaves the namespace out, for Git; created, the
			// request goes to the kubeconfig's namespace unless -n.
			if output != "" && a.flags.Namespace != nil {
				o.Namespace = *a.flags.Namespace
			}
			rr, err := request.Build(o)
			if err != nil {
				return exit.With(exit.Usage, err)
			}
			if output != "" {
				return printManifest(a.streams.Out, output, rr)
			}
			c, ns, err := a.client()
			if err != nil {
				return err
			}
			rr.Namespace = ns
			if err := c.Create(cmd.Context(), rr); err != nil {
				if cmd.Context().Err() != nil {
					return interruptedCreate(c, rr)
				}
				return apiError(err)
			}
			fmt.Fprintf(a.streams.Out, "replayrequest.kafkareplay.dev/%s created\n", rr.Name)
			if !w.wait {
				return nil
			}
			return a.follow(cmd.Context(), rr.Namespace, rr.Name, w.timeout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BootstrapServers, request.FlagBootstrapServers, "", "Kafka bootstrap servers, host:port[,host:port...] (spec.kafka.bootstrapServers)")
	f.StringVar(&o.ConfigMap, request.FlagConfigMap, "", "ConfigMap of librdkafka properties in the namespace (spec.kafka.configMapRef)")
	f.StringVar(&o.Secret, request.FlagSecret, "", "Secret of credential properties in the namespace (spec.kafka.secretRef)")
	f.StringArrayVar(&o.Groups, request.FlagGroup, nil, "consumer group to move (spec.group); repeat it for several, each moved on its own under one plan and one approval (spec.groups)")
	f.StringArrayVar(&o.GroupInclude, request.FlagGroupInclude, nil, "instead of --group, every group whose name starts with this prefix, or matches regex:RE (RE2, the whole name); repeatable; resolved once, when the request is accepted (spec.groupSelector.include)")
	f.BoolVar(&o.AllGroups, request.FlagAllGroups, false, "instead of --group, every consumer group the cluster lists when the request is accepted (Kafka's --all-groups; spec.groupSelector.include regex .*), narrowed by --group-exclude and --group-with-offsets-on")
	f.StringArrayVar(&o.GroupExclude, request.FlagGroupExclude, nil, "with --group-include, leave out the groups with this prefix or matching regex:RE; repeatable (spec.groupSelector.exclude)")
	f.StringArrayVar(&o.GroupWithOffsetsOn, request.FlagGroupWithOffsetsOn, nil, "with --group-include, keep only the groups with committed offsets on this topic (or another given); repeatable (spec.groupSelector.withOffsetsOn)")
	f.Int32Var(&o.Parallelism, request.FlagParallelism, 0, "with several groups, how many groups' requests may run at once, each still waiting for its own group (spec.parallelism; 1 when unset, at most 10; 1 with --consumers)")
	f.BoolVar(&o.ContinueOnError, request.FlagContinueOnError, false, "with several groups, go on to the next group after one failed; by default the first failure stops the groups not yet started (spec.continueOnError)")
	f.BoolVar(&o.DeleteAllInternalTopics, request.FlagDeleteAllInternalTopics, false, "a streams group only: once its offsets are moved, delete its internal topics (repartition and changelog topics), as kafka-streams-groups.sh --delete-all-internal-topics; the plan lists them, and an undo cannot recreate them (spec.deleteAllInternalTopics)")
	f.StringVar(&o.GroupType, request.FlagGroupType, "", "the kind of group it must be: Classic, Consumer, Share or Streams; any other kind is refused before anything is planned; Auto (default) resets it as the kind it is (spec.groupType)")
	f.StringArrayVar(&o.Topics, request.FlagTopic, nil, "topic, or topic:partitions such as orders:0,1 or orders:0-3; repeatable; none means every topic the group committed (spec.topics)")
	f.StringVar(&o.To, request.FlagTo, "", "target, in the runner's grammar (spec.target; see above)")
	f.BoolVar(&o.DryRun, request.FlagDryRun, false, "plan only, commit nothing (spec.dryRun)")
	f.StringVar(&o.Approval, request.FlagApproval, "", "Automatic (default) or Manual: plan first, apply only once approved (spec.approval)")
	f.DurationVar(&o.ApprovalTimeout, request.FlagApprovalTimeout, 0, "with --approval Manual, fail Expired if nobody decides within this (spec.approvalTimeout; 24h when unset)")
	f.DurationVar(&o.WaitForEmpty, request.FlagWaitForEmpty, 0, "if the group has members, wait up to this long for it to empty (spec.whenGroupActive: Wait, spec.waitTimeout); 0 fails at once")
	f.StringVar(&o.ConsumerRef, request.FlagConsumerRef, "", "a Knative KafkaSource, Trigger or Subscription whose group is replayed, KIND/NAME: kafkasource/x, trigger/x, subscription/x, instead of --bootstrap-servers, --group and --topic; or a Strimzi sink connector, kafkaconnector/x, with --cluster and --user, instead of --group and --topic (spec.consumerRef)")
	f.StringVar(&o.Cluster, request.FlagCluster, "", "a Strimzi Kafka and one of its listeners, KAFKA/LISTENER such as my-cluster/tls, instead of --bootstrap-servers and --secret (spec.kafka.clusterRef)")
	f.StringVar(&o.User, request.FlagUser, "", "with --cluster, the KafkaUser to connect as; its Secret holds the credentials (spec.kafka.clusterRef.user)")
	f.StringArrayVar(&o.Consumers, request.FlagConsumers, nil, "workloads to pause meanwhile, KIND/NAME: deploy/x, sts/x, scaledobject/x; repeatable or comma-separated (spec.consumers; needs --wait-for-empty)")
	f.Int64Var(&maxReconsume, request.FlagMaxMessagesToReconsume, 0, "refuse the plan (LimitExceeded) if it re-consumes more messages than this (spec.limits.maxMessagesToReconsume); with several groups, per group")
	f.Int64Var(&maxTotal, request.FlagMaxTotalMessagesToReconsume, 0, "with several groups, refuse the plan (LimitExceeded, nothing applied) if all groups together re-consume more messages than this; the groups plan first, also without --approval Manual (spec.limits.maxTotalMessagesToReconsume)")
	f.BoolVar(&o.AllowSkip, request.FlagAllowSkip, false, "allow moving partitions forward, past messages never consumed (spec.limits.allowSkip)")
	f.StringVar(&o.CommitMode, request.FlagCommitMode, "", "Plain (the default: OffsetCommit), Atomic (one Kafka transaction that fences every other replay of the group; needs WRITE and DESCRIBE on TransactionalId kafka-replay.<group>) or Auto (Atomic where allowed) (spec.commitMode)")
	f.StringVar(&o.RunnerImage, request.FlagRunnerImage, "", "runner image instead of the launcher's (spec.runner.image)")
	f.StringVar(&o.ServiceAccount, request.FlagServiceAccount, "", "ServiceAccount the runner pod runs as (spec.runner.serviceAccountName)")
	f.DurationVar(&o.ActiveDeadline, request.FlagActiveDeadline, 0, "bound on the whole runner Job (spec.runner.activeDeadlineSeconds)")
	f.StringVar(&o.BootstrapServers, "bootstrap-server", "", "alias of --bootstrap-servers, as Kafka's tools spell it")
	_ = f.MarkHidden("bootstrap-server")
	outputFlag(cmd, &output, "the request without creating it")
	w.add(cmd)
	return cmd
}

// interruptedCreate says what an interrupted create left behind: the API
// server may have made the request before the interrupt cut off its
// answer, and a request that exists runs whether or not anyone follows it.
// It asks the API server, with a context of its own.
func interruptedCreate(c client.Client, rr *v1alpha1.ReplayRequest) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch err := c.Get(ctx, client.ObjectKeyFromObject(rr), &v1alpha1.ReplayRequest{}); {
	case err == nil:
		// Most likely this command's: a request of that name made before
		// it would have refused the create (AlreadyExists).
		return exit.Errorf(exit.Interrupted, "interrupted; the request goes on: replayrequest %s exists (kubectl replay describe to see it)", rr.Name)
	case apierrors.IsNotFound(err):
		return exit.Errorf(exit.Interrupted, "interrupted before replayrequest %s was created; nothing was made", rr.Name)
	default:
		return exit.Errorf(exit.Interrupted, "interrupted while replayrequest %s was being created, and whether it was is unknown: %v (kubectl replay describe %s to see)", rr.Name, err, rr.Name)
	}
}
