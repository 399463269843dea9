package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

func TestGroupsRunnerArgs(t *testing.T) {
	base := groupsOptions{bootstrap: "kafka:9092", timeout: time.Minute}
	with := func(f func(*groupsOptions)) groupsOptions {
		o := base
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name string
		o    groupsOptions
		want string // the runner's flags, or the usage error
	}{
		{"a list by default", base, "--list --bootstrap-servers kafka:9092 --output json --timeout 1m0s"},
		{"--group means describe", with(func(o *groupsOptions) { o.groups = []string{"a", "b"} }), "--describe --group a --group b --bootstrap-servers kafka:9092 --output json --timeout 1m0s"},
		{"all groups", with(func(o *groupsOptions) { o.describe, o.allGroups = true, true }), "--describe --all-groups --bootstrap-servers kafka:9092 --output json --timeout 1m0s"},
		{"credentials are a directory", with(func(o *groupsOptions) { o.secret, o.configMap = "creds", "props" }),
			"--list --bootstrap-servers kafka:9092 --output json --timeout 1m0s --kafka-config-dir /etc/kafka-replay/kafka --kafka-secret-dir /etc/kafka-replay/kafka-secret"},
		{"no servers", with(func(o *groupsOptions) { o.bootstrap = "" }), "--bootstrap-servers (or --cluster) is required"},
		{"bad servers", with(func(o *groupsOptions) { o.bootstrap = "kafka" }), `--bootstrap-servers: "kafka" is not host:port`},
		{"list and describe", with(func(o *groupsOptions) { o.list, o.describe = true, true }), "--list conflicts with --describe"},
		{"list with a group", with(func(o *groupsOptions) { o.list, o.groups = true, []string{"a"} }), "--list lists every group"},
		{"describe of nothing", with(func(o *groupsOptions) { o.describe = true }), "--describe needs --group"},
		{"group and all", with(func(o *groupsOptions) { o.groups, o.allGroups = []string{"a"}, true }), "--all-groups conflicts with --group"},
		{"yaml", with(func(o *groupsOptions) { o.output = "yaml" }), `--output: "yaml" is not json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := tc.o.runnerArgs()
			got := strings.Join(args, " ")
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGroupsRunnerArgsAreTheRunners: every flag the plugin passes is one
// the runner's --list/--describe reads (config.LoadInspect).
func TestGroupsRunnerArgsAreTheRunners(t *testing.T) {
	o := groupsOptions{bootstrap: "kafka:9092", timeout: time.Minute, describe: true, groups: []string{"a"}}
	args, err := o.runnerArgs()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	in, err := config.LoadInspect(args, &stderr)
	if err != nil || !in.Describe || !slices.Equal(in.Groups, []string{"a"}) || in.Output != config.OutputJSON || in.Conn.Timeout != time.Minute {
		t.Errorf("the runner read %v as %+v, %v; %s", args, in, err, stderr.String())
	}
}

// TestGroupsPod: the pod runs as the runner Jobs do, mounts the Secret as
// the runner's directory, and carries no credential in its spec.
func TestGroupsPod(t *testing.T) {
	o := groupsOptions{bootstrap: "kafka:9092", timeout: time.Minute, secret: "kafka-credentials", configMap: "kafka-props"}
	args, err := o.runnerArgs()
	if err != nil {
		t.Fatal(err)
	}
	p := groupsPod("shop", "registry.local/runner:1", args, o)
	if p.Namespace != "shop" || p.GenerateName == "" || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("pod meta: %+v", p.ObjectMeta)
	}
	if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token")
	}
	sc := p.Spec.Containers[0].SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot {
		t.Errorf("container security: %+v", sc)
	}
	mounts := map[string]string{}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			mounts[v.Name] = "secret " + v.Secret.SecretName
		case v.ConfigMap != nil:
			mounts[v.Name] = "configmap " + v.ConfigMap.Name
		}
	}
	if mounts["kafka-secret"] != "secret kafka-credentials" || mounts["kafka-config"] != "configmap kafka-props" {
		t.Errorf("volumes: %v", mounts)
	}
	b, _ := json.Marshal(p)
	for _, leak := range []string{"password", "sasl", "valueFrom"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the pod's spec holds %q: %s", leak, b)
		}
	}
}

func TestGroupsPodStuck(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: groupsContainer,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "no such image"}}}}}}
	if got := stuck(p); got != "ImagePullBackOff: no such image" {
		t.Errorf("stuck: %q", got)
	}
	p.Status.ContainerStatuses[0].State.Waiting.Reason = "ContainerCreating"
	if got := stuck(p); got != "" {
		t.Errorf("a pod still creating is not stuck: %q", got)
	}
}

// TestRunnerImageArgs reads the runner image as the chart passes it to
// the launcher (charts/kafka-replay/templates/deployment.yaml).
func TestRunnerImageArgs(t *testing.T) {
	img, pull := runnerImageArgs([]string{"--leader-elect", "--runner-image=registry.local/runner:1", "--runner-image-pull-policy=Never"})
	if img != "registry.local/runner:1" || pull != corev1.PullNever {
		t.Errorf("got %q, %q", img, pull)
	}
	chart, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "charts", "kafka-replay", "templates", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"- --runner-image=", "- --runner-image-pull-policy="} {
		if !strings.Contains(string(chart), arg) {
			t.Errorf("the chart no longer passes %s", arg)
		}
	}
}
