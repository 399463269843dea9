package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/clusterref"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// `kubectl replay groups` runs the runner's read-only --list or --describe
// in the cluster, in a pod of the runner image beside the consumers, with
// the Kafka settings a request takes (--bootstrap-servers, --config-map,
// --secret, or a Strimzi --cluster and --user), and prints what it found. The cluster, not the operator's
// machine, can reach Kafka and holds the credentials: they are mounted
// into the pod and never pass through the plugin.

// groupsOptions are the flags of `kubectl replay groups`.
type groupsOptions struct {
	list, describe, allGroups bool
	groups                    []string
	bootstrap, configMap      string
	secret                    string
	// cluster and user name a Strimzi Kafka's listener and KafkaUser, as
	// create's flags of the same names (spec.kafka.clusterRef); resolved
	// is what they resolve to, once the plugin has read them.
	cluster, user            string
	resolved                 *v1alpha1.ResolvedKafka
	image, launcherNamespace string
	output                   string
	timeout                  time.Duration
}

// groupsContainer is the container of the groups pod.
const groupsContainer = "runner"

// Where the groups pod mounts the request-style Kafka settings.
const (
	groupsConfigDir = "/etc/kafka-replay/kafka"
	groupsSecretDir = "/etc/kafka-replay/kafka-secret"
)

func (a *app) groupsCommand() *cobra.Command {
	o := groupsOptions{}
	cmd := &cobra.Command{
		Use:   "groups --bootstrap-servers HOST:PORT [--list | --describe (--group GROUP... | --all-groups)]",
		Short: "List Kafka's consumer groups, or describe their members, offsets and lag (read-only)",
		Long: `Runs the runner's read-only --list or --describe (kafka-consumer-groups.sh's
flags) in a pod of the runner image in the namespace, with the Kafka settings
a request takes, prints what it found, and deletes the pod.

--list (the default) prints every group with its kind, state, member count
and topics. --describe prints, per group, each committed or assigned
partition: committed offset, log end, lag, and the member (consumer ID,
host, client ID) that reads it. -o json prints the runner's listing
(runner/report.Groups).

--cluster KAFKA/LISTENER and --user NAME connect as a request's
spec.kafka.clusterRef does: the listener's servers and CA, and the
KafkaUser's Secret, read from the Strimzi objects and mounted into the pod;
the plugin reads no Secret.

It needs, in the namespace: pods create, get, watch and delete, pods/log
get, and events list; with --cluster, kafkas and kafkausers
(kafka.strimzi.io) get; and, without --runner-image, deployments list in
the launcher's namespace, to run the runner image the launcher runs.`,
		Example: `  kubectl replay groups -n shop --bootstrap-servers kafka:9092
  kubectl replay groups -n shop --bootstrap-servers kafka:9092 --secret kafka-credentials \
    --describe --group orders-service
  kubectl replay groups -n shop --cluster my-cluster/tls --user replay
  kubectl replay groups -n shop --bootstrap-servers kafka:9092 --describe --all-groups -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("groups takes no arguments; --group GROUP chooses a group")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("bootstrap-server") && cmd.Flags().Changed(request.FlagBootstrapServers) {
				return exit.Errorf(exit.Usage, "--bootstrap-server is an alias of --bootstrap-servers: give one of them")
			}
			args, err := o.runnerArgs()
			if err != nil {
				return err
			}
			return a.groups(cmd.Context(), o, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.list, config.FlagList, false, "list every group: kind, state, member count, topics (the default)")
	f.BoolVar(&o.describe, config.FlagDescribe, false, "describe groups: members, and per partition committed offset, log end and lag")
	f.StringArrayVar(&o.groups, config.FlagGroup, nil, "with --describe, a group to describe; repeatable")
	f.BoolVar(&o.allGroups, config.FlagAllGroups, false, "with --describe, every group")
	f.StringVar(&o.bootstrap, request.FlagBootstrapServers, "", "Kafka bootstrap servers, host:port[,host:port...], as a request's spec.kafka.bootstrapServers")
	f.StringVar(&o.bootstrap, "bootstrap-server", "", "alias of --bootstrap-servers, as Kafka's tools spell it")
	_ = f.MarkHidden("bootstrap-server")
	f.StringVar(&o.configMap, request.FlagConfigMap, "", "ConfigMap of librdkafka properties in the namespace, as a request's spec.kafka.configMapRef")
	f.StringVar(&o.secret, request.FlagSecret, "", "Secret of credential properties in the namespace, as a request's spec.kafka.secretRef")
	f.StringVar(&o.cluster, request.FlagCluster, "", "a Strimzi Kafka and one of its listeners, KAFKA/LISTENER such as my-cluster/tls, instead of --bootstrap-servers and --secret (as a request's spec.kafka.clusterRef)")
	f.StringVar(&o.user, request.FlagUser, "", "with --cluster, the KafkaUser to connect as; its Secret holds the credentials (spec.kafka.clusterRef.user)")
	f.StringVar(&o.image, request.FlagRunnerImage, "", "runner image (default: the one the launcher runs)")
	f.StringVar(&o.launcherNamespace, "launcher-namespace", "kafka-replay-system", "where the launcher runs, to find its runner image")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long the pod may take to start and answer")
	f.StringVarP(&o.output, "output", "o", "", "print the runner's listing as json")
	return cmd
}

// runnerArgs are the runner's flags for o; every bad combination is a
// usage error naming the flag, before anything is created.
func (o groupsOptions) runnerArgs() ([]string, error) {
	if o.output != "" && o.output != "json" {
		return nil, exit.Errorf(exit.Usage, "--output: %q is not json", o.output)
	}
	bootstrap := o.bootstrap
	switch {
	case o.cluster != "" && o.bootstrap != "":
		return nil, exit.Errorf(exit.Usage, "--%s conflicts with --%s, whose listener gives the servers: give one of them", request.FlagCluster, request.FlagBootstrapServers)
	case o.cluster != "" && o.secret != "":
		return nil, exit.Errorf(exit.Usage, "--%s conflicts with --%s: with --%s, --%s names the credentials", request.FlagSecret, request.FlagCluster, request.FlagCluster, request.FlagUser)
	case o.user != "" && o.cluster == "":
		return nil, exit.Errorf(exit.Usage, "--%s needs --%s: the KafkaUser of which Kafka", request.FlagUser, request.FlagCluster)
	case o.cluster == "" && o.bootstrap == "":
		return nil, exit.Errorf(exit.Usage, "--%s (or --%s) is required: the Kafka the groups are in", request.FlagBootstrapServers, request.FlagCluster)
	case o.cluster != "":
		if _, err := request.ClusterRef(o.cluster, o.user); err != nil {
			return nil, exit.Errorf(exit.Usage, "--%s: %v", request.FlagCluster, err)
		}
		if o.resolved != nil {
			bootstrap = o.resolved.BootstrapServers
		}
	}
	if bootstrap != "" {
		if err := config.ValidateBootstrapServers(bootstrap); err != nil {
			return nil, exit.Errorf(exit.Usage, "--%s: %v", request.FlagBootstrapServers, err)
		}
	}
	describe := o.describe || (!o.list && (len(o.groups) > 0 || o.allGroups))
	switch {
	case o.list && o.describe:
		return nil, exit.Errorf(exit.Usage, "--list conflicts with --describe: give one of them")
	case !describe && (len(o.groups) > 0 || o.allGroups):
		return nil, exit.Errorf(exit.Usage, "--list lists every group; to see some, use --describe --group NAME (or --all-groups)")
	case describe && len(o.groups) > 0 && o.allGroups:
		return nil, exit.Errorf(exit.Usage, "--all-groups conflicts with --group: give one of them")
	case describe && len(o.groups) == 0 && !o.allGroups:
		return nil, exit.Errorf(exit.Usage, "--describe needs --group NAME (repeatable) or --all-groups")
	}
	for _, g := range o.groups {
		if err := config.ValidateGroup(g); err != nil {
			return nil, exit.Errorf(exit.Usage, "--group %q: %v", g, err)
		}
	}
	args := []string{"--" + config.FlagList}
	if describe {
		args = []string{"--" + config.FlagDescribe}
		for _, g := range o.groups {
			args = append(args, "--"+config.FlagGroup, g)
		}
		if o.allGroups {
			args = append(args, "--"+config.FlagAllGroups)
		}
	}
	args = append(args, "--"+config.FlagBootstrapServers, bootstrap, "--"+config.FlagOutput, config.OutputJSON,
		"--"+config.FlagTimeout, o.timeout.String())
	if o.configMap != "" {
		args = append(args, "--"+config.FlagKafkaConfigDir, groupsConfigDir)
	}
	if o.secret != "" || o.resolved != nil {
		args = append(args, "--"+config.FlagKafkaSecretDir, groupsSecretDir)
	}
	return args, nil
}

// groupsPod is the pod that runs the runner's listing: the runner Job's
// restrictions (non-root, read-only, no service account token, no
// capabilities), the ConfigMap and the Secret mounted as the runner's
// directories; no credential is in the pod's spec. A clusterRef's pod has
// the Job's binding too (clusterref.Binding), so that its runner refuses
// another cluster, or properties changed since the plugin resolved them,
// as the Job's does.
func groupsPod(ns, image string, args []string, o groupsOptions) *corev1.Pod {
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	mount := func(name, dir string, src corev1.VolumeSource) {
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: src})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true})
	}
	if o.configMap != "" {
		mount("kafka-config", groupsConfigDir, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.configMap}}})
	}
	if o.secret != "" {
		mount("kafka-secret", groupsSecretDir, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: o.secret}})
	}
	// A clusterRef's directory, as a runner Job of such a request has it:
	// the CA's and the user's Secret keys, and the resolved properties
	// (the binding among them) from the pod's annotations.
	sources, annotations := clusterref.SecretDir(o.resolved)
	if len(sources) > 0 {
		mount("kafka-secret", groupsSecretDir, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources, DefaultMode: ptr.To[int32](0o440)}})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "kafka-replay-groups-",
			Namespace:    ns,
			Labels:       map[string]string{"app.kubernetes.io/part-of": "kafka-replay", "app.kubernetes.io/component": "groups"},
			Annotations:  annotations,
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
			ActiveDeadlineSeconds:        ptr.To(int64(o.timeout.Seconds()) + 60),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](replay.RunnerUID),
				RunAsGroup:     ptr.To[int64](replay.RunnerUID),
				FSGroup:        ptr.To[int64](replay.RunnerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:         groupsContainer,
				Image:        image,
				Args:         args,
				Env:          clusterref.Binding(o.resolved),
				VolumeMounts: mounts,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes: volumes,
		},
	}
}

// resolveCluster reads the Strimzi Kafka and KafkaUser that --cluster and
// --user name in ns and resolves them as the launcher resolves a
// request's clusterRef; a refusal names the flag.
func resolveCluster(ctx context.Context, c client.Client, ns, cluster, user string) (*v1alpha1.ResolvedKafka, error) {
	ref, err := request.ClusterRef(cluster, user)
	if err != nil {
		return nil, exit.Errorf(exit.Usage, "--%s: %v", request.FlagCluster, err)
	}
	get := func(gvk schema.GroupVersionKind, name string) (*unstructured.Unstructured, error) {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); {
		case err == nil:
			return obj, nil
		case apierrors.IsNotFound(err):
			return nil, nil // Resolve says which is missing
		case meta.IsNoMatchError(err):
			return nil, exit.Errorf(exit.NotFound, "--%s: this cluster does not serve %s (%s): is Strimzi installed?", request.FlagCluster, gvk.Kind, gvk.GroupVersion())
		default:
			return nil, apiError(fmt.Errorf("read %s %s/%s: %w", gvk.Kind, ns, name, err))
		}
	}
	kafka, err := get(clusterref.KafkaGVK, ref.Name)
	if err != nil {
		return nil, err
	}
	var ku *unstructured.Unstructured
	if ref.User != "" && kafka != nil {
		if ku, err = get(clusterref.KafkaUserGVK, ref.User); err != nil {
			return nil, err
		}
	}
	res, err := clusterref.Resolve(*ref, kafka, ku)
	if err != nil {
		// The launcher's words are a request's fields; here they are the
		// flags that set them.
		msg := strings.TrimPrefix(err.Error(), clusterref.ErrNotResolvable.Error()+": ")
		msg = strings.ReplaceAll(msg, "the request's namespace", "namespace "+ns)
		msg = request.InPluginWords(strings.ReplaceAll(msg, "kafka.clusterRef", "spec.kafka.clusterRef"))
		return nil, exit.Errorf(exit.Usage, "%s", msg)
	}
	return &res, nil
}

func (a *app) groups(ctx context.Context, o groupsOptions, args []string) error {
	c, ns, err := a.client()
	if err != nil {
		return err
	}
	image, pull := o.image, corev1.PullPolicy("")
	if image == "" {
		if image, pull, err = launcherRunnerImage(ctx, c, o.launcherNamespace); err != nil {
			return err
		}
	}
	if o.cluster != "" {
		if o.resolved, err = resolveCluster(ctx, c, ns, o.cluster, o.user); err != nil {
			return err
		}
		if args, err = o.runnerArgs(); err != nil {
			return err
		}
	}
	cfg, err := a.flags.ToRESTConfig()
	if err != nil {
		return exit.With(exit.APIError, fmt.Errorf("kubeconfig: %w", err))
	}
	// The core client alone: the whole clientset would add 15 MB to the
	// plugin for one GetLogs.
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return exit.With(exit.APIError, err)
	}
	pod := groupsPod(ns, image, args, o)
	pod.Spec.Containers[0].ImagePullPolicy = pull
	if err := c.Create(ctx, pod); err != nil {
		return apiError(err)
	}
	// The pod is deleted however the listing ends, an interrupt included.
	defer func() {
		del, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := c.Delete(del, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			fmt.Fprintf(a.streams.ErrOut, "warning: could not delete pod %s/%s: %v\n", ns, pod.Name, err)
		}
	}()
	wait, cancel := context.WithTimeout(ctx, o.timeout+30*time.Second)
	defer cancel()
	done, err := waitPodDone(wait, c, pod)
	if err != nil {
		if wait.Err() != nil && ctx.Err() == nil {
			return exit.Errorf(exit.Timeout, "pod %s/%s did not finish within %s: %s", ns, pod.Name, o.timeout+30*time.Second, podTrouble(ctx, c, done))
		}
		return apiError(err)
	}
	logs, err := core.Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: groupsContainer}).Stream(ctx)
	if err != nil {
		return apiError(err)
	}
	defer func() { _ = logs.Close() }()
	out, err := io.ReadAll(io.LimitReader(logs, 64<<20))
	if err != nil {
		return apiError(err)
	}
	code := exitCode(done)
	if code != 0 {
		// The runner's own error lines, redacted by the runner.
		return exit.Errorf(exit.Failed, "the runner's listing failed (exit %d, %s):\n%s", code, report.ReasonForExitCode(report.ExitCode(code)), render.CleanLines(strings.TrimSpace(string(out))))
	}
	listing, err := report.DecodeGroups(bytes.TrimSpace(out))
	if err != nil {
		return exit.Errorf(exit.Failed, "the runner's listing could not be read (is %s a runner image of this version?): %v", image, err)
	}
	if o.output == "json" {
		return report.EncodeGroups(a.streams.Out, listing)
	}
	return report.WriteGroupsTable(a.streams.Out, listing)
}

// launcherRunnerImage is the --runner-image (and its pull policy) the
// launcher's Deployment runs with, as the chart sets them.
func launcherRunnerImage(ctx context.Context, c client.Client, ns string) (string, corev1.PullPolicy, error) {
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/part-of": "kafka-replay", "app.kubernetes.io/component": "launcher"}); err != nil {
		return "", "", apiError(fmt.Errorf("find the launcher's runner image in namespace %s (or give --%s): %w", ns, request.FlagRunnerImage, err))
	}
	for _, d := range deps.Items {
		for _, ctr := range d.Spec.Template.Spec.Containers {
			if img, pull := runnerImageArgs(ctr.Args); img != "" {
				return img, pull, nil
			}
		}
	}
	return "", "", exit.Errorf(exit.NotFound, "no launcher Deployment with a --runner-image in namespace %s: give --launcher-namespace, or --%s", ns, request.FlagRunnerImage)
}

// runnerImageArgs reads the launcher's --runner-image and
// --runner-image-pull-policy from its arguments.
func runnerImageArgs(args []string) (string, corev1.PullPolicy) {
	var img string
	var pull corev1.PullPolicy
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, "--runner-image="); ok {
			img = v
		} else if v, ok := strings.CutPrefix(arg, "--runner-image-pull-policy="); ok {
			pull = corev1.PullPolicy(v)
		}
	}
	return img, pull
}

// waitPodDone watches pod until it has succeeded or failed, and returns
// its last state (also when ctx ends first).
func waitPodDone(ctx context.Context, c client.WithWatch, pod *corev1.Pod) (*corev1.Pod, error) {
	last := pod.DeepCopy()
	for {
		var pods corev1.PodList
		w, err := c.Watch(ctx, &pods, client.InNamespace(pod.Namespace), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", pod.Name)})
		if err != nil {
			return last, err
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			last = p
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				w.Stop()
				return last, nil
			}
			if reason := stuck(p); reason != "" {
				w.Stop()
				return last, exit.Errorf(exit.Failed, "pod %s/%s cannot start: %s", p.Namespace, p.Name, reason)
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
	}
}

// stuck is why a pod's container cannot start without someone's help: an
// image that cannot be pulled, a configuration that cannot be made.
func stuck(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return w.Reason + ": " + w.Message
			}
		}
	}
	return ""
}

// podTrouble is what the pod's Warning events say, the cause of a pod
// that never started (a missing Secret or ConfigMap is a FailedMount).
func podTrouble(ctx context.Context, c client.Client, p *corev1.Pod) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var evs corev1.EventList
	if err := c.List(ctx, &evs, client.InNamespace(p.Namespace)); err != nil {
		return "phase " + string(p.Status.Phase) + " (its events could not be read: " + err.Error() + ")"
	}
	var msgs []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == p.Name && e.Type == corev1.EventTypeWarning {
			msgs = append(msgs, e.Reason+": "+e.Message)
		}
	}
	if len(msgs) == 0 {
		return "phase " + string(p.Status.Phase)
	}
	return render.CleanLines(strings.Join(msgs, "; "))
}

// exitCode is the runner container's exit code; -1 when it has none.
func exitCode(p *corev1.Pod) int {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == groupsContainer && cs.State.Terminated != nil {
			return int(cs.State.Terminated.ExitCode)
		}
	}
	return -1
}
