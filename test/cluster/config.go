package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

// The component configurations. Each setting that departs from a default
// does so because this kind of machine needs it (see
// ../shared/notes/real-components.md): cgroup v1 with the cgroupfs driver,
// no CAP_SYS_RESOURCE, no registry, no network beyond the namespace.
var configTemplates = map[string]string{
	"containerd.toml": `version = 2
root = "{{.Dir}}/containerd/root"
state = "{{.Dir}}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{{.Socket}}"
[ttrpc]
  address = "{{.Socket}}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.PauseImage}}"
  # No CAP_SYS_RESOURCE here: runc cannot lower oom_score_adj (the pause
  # sandbox asks for -998) and fails with "can't get final child's PID from
  # pipe". This clamps requested values to [current, 1000].
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      # runc, not crun: crun fails on this hybrid cgroup setup. A private
      # runc root keeps this cluster's container state out of
      # /run/containerd/runc, so teardown touches nothing it did not make.
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "{{.Runc}}"
        Root = "{{.Dir}}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.CNIBin}}"
    conf_dir = "{{.Dir}}/etc/cni"
`,
	// Bridge CNI with no default route and no masquerade: pods reach only
	// the pod subnet, the node IP (API server, kfake) and service IPs.
	"cni/10-kafka-replay.conflist": `{
  "cniVersion": "0.4.0",
  "name": "kafka-replay-e2e",
  "plugins": [
    {"type": "bridge", "bridge": "{{.Bridge}}", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "{{.Dir}}/cni-ipam",
              "ranges": [[{"subnet": "{{.PodCIDR}}"}]],
              "routes": [{"dst": "{{.NodeIP}}/32"}, {"dst": "{{.ServiceCIDR}}"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`,
	"kubelet.yaml": `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {{.NodeIP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "{{.Dir}}/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
tlsCertFile: "{{.Dir}}/pki/kubelet-serving.crt"
tlsPrivateKeyFile: "{{.Dir}}/pki/kubelet-serving.key"
containerRuntimeEndpoint: "unix://{{.Socket}}"
# cgroup v1 with cgroupfs and no systemd: keep the kubelet from managing
# QoS cgroups or enforcing allocatable, which it cannot do here.
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
podLogsDir: "{{.Dir}}/pod-logs"
podCIDR: "{{.PodCIDR}}"
rotateCertificates: false
serializeImagePulls: false
# Images are imported, never pulled: never garbage-collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"}
# Fast status updates: tests wait on them.
syncFrequency: 5s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 5s
`,
	"kube-proxy.yaml": `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "{{.Dir}}/etc/kube-proxy.kubeconfig"}
hostnameOverride: {{.NodeName}}
mode: iptables
clusterCIDR: {{.PodCIDR}}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["{{.NodeIP}}/32"]
iptables: {localhostNodePorts: false}
# Zero leaves the conntrack sysctls alone: they are global, not per
# namespace, and belong to the host.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
`,
}

const kubeconfigTemplate = `apiVersion: v1
kind: Config
clusters:
- name: kafka-replay-e2e
  cluster: {server: "{{.Server}}", certificate-authority: "{{.Dir}}/pki/ca.crt"}
users:
- name: {{.User}}
  user: {client-certificate: "{{.Dir}}/pki/{{.Cert}}.crt", client-key: "{{.Dir}}/pki/{{.Cert}}.key"}
contexts:
- name: kafka-replay-e2e
  context: {cluster: kafka-replay-e2e, user: {{.User}}}
current-context: kafka-replay-e2e
`

// configValues fill the templates.
type configValues struct {
	Dir, Socket, PauseImage, Runc, CNIBin, Bridge string
	NodeIP, NodeName, PodCIDR, ServiceCIDR        string
	// For kubeconfigs.
	Server, User, Cert string
}

func renderTo(path, tmpl string, v configValues) error {
	t, err := template.New(filepath.Base(path)).Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

func writeConfigs(etc string, v configValues) error {
	for name, tmpl := range configTemplates {
		if err := renderTo(filepath.Join(etc, name), tmpl, v); err != nil {
			return err
		}
	}
	for _, kc := range []struct{ file, user, cert string }{
		{"admin", "kafka-replay-e2e-admin", "admin"},
		{"kube-controller-manager", "system:kube-controller-manager", "kube-controller-manager"},
		{"kube-scheduler", "system:kube-scheduler", "kube-scheduler"},
		{"kubelet", "system:node:" + v.NodeName, "kubelet-client"},
		{"kube-proxy", "system:kube-proxy", "kube-proxy"},
	} {
		kv := v
		kv.User, kv.Cert = kc.user, kc.cert
		if err := renderTo(filepath.Join(etc, kc.file+".kubeconfig"), kubeconfigTemplate, kv); err != nil {
			return err
		}
	}
	return nil
}
