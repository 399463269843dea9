package kafkatest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApacheEnv selects Apache Kafka for the tests instead of kfake: its value
// is the directory holding the broker's classpath (`make kafka-jars`). Every
// kafkatest.Cluster of the test binary is then a real KRaft cluster.
const ApacheEnv = "KAFKA_REPLAY_TEST_APACHE"

// apacheDirPrefix names the directories StartApache makes, so that a later
// start can find and remove those of a test binary that was killed.
const apacheDirPrefix = "kafka-replay-apache-"

// ApacheOptions configure a real Apache Kafka cluster.
type ApacheOptions struct {
	// Libs is the directory of the jars (kafka_2.13, kafka-tools and their
	// dependencies). Required.
	Libs string
	// Nodes is the number of KRaft nodes, each both broker and controller.
	Nodes int
	// HeapMB is each node's maximum Java heap (default 384).
	HeapMB int
	// JVMOpts replace the default JVM tuning flags (not the heap), e.g. to
	// measure the broker at full JIT for a benchmark.
	JVMOpts []string
	// Properties are extra or overriding server properties for every node.
	Properties map[string]string
	// Java is the java binary (default $JAVA_HOME/bin/java, else java).
	Java string
	// Host is the one address every node listens on (clients and
	// controllers) and advertises (default 127.0.0.1). It must be an
	// address the test made, such as a test cluster's node IP inside its
	// own network namespace: a broker never listens anywhere else.
	Host string
	// SASL, when set, gives every node a SASL_PLAINTEXT listener beside
	// the harness's own PLAINTEXT one (apache_sasl.go).
	SASL *SASLOptions
	// Network, when set, is where Host exists: the nodes run in it, their
	// ports are chosen in it, and the harness's own client dials into it.
	// Nil: the test process's network namespace.
	Network Network
}

// Network is a network namespace other than the test process's, as
// test/cluster's NetNS gives one: pods of a test Kubernetes cluster reach
// a broker that listens on its node IP.
type Network interface {
	Listen(network, address string) (net.Listener, error)
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
	// Command is an exec.Cmd that runs name inside the namespace with the
	// PID of name itself (nsenter execs it), so that Stop's kill by PID
	// reaches the JVM.
	Command(ctx context.Context, name string, args ...string) *exec.Cmd
}

// Apache is a running Apache Kafka KRaft cluster on one address: processes
// this test binary started, and a directory it alone owns.
type Apache struct {
	dir       string
	nodes     []*apacheNode
	bootstrap []string
	network   Network
	// sasl lists the SASL_PLAINTEXT listeners, when ApacheOptions.SASL
	// asked for them; libs and java run Kafka's tools (AddSCRAMUser).
	sasl       []string
	libs, java string
}

type apacheNode struct {
	id      int
	dir     string
	log     string // the node's log4j file and stdout/stderr
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// defaultJVMOpts favour a quick start and a small footprint on a shared
// 2-core machine over throughput: one serial GC thread, C1 only.
var defaultJVMOpts = []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true"}

// StartApache formats and starts a KRaft cluster of o.Nodes combined
// broker+controller nodes on o.Host, each with its own data directory
// and free ports, and returns once every broker is registered and the
// group coordinator answers. Stop kills the processes and removes
// everything StartApache made.
func StartApache(ctx context.Context, o ApacheOptions) (*Apache, error) {
	if o.Libs == "" {
		return nil, errors.New("apache kafka: no classpath directory (ApacheOptions.Libs)")
	}
	if _, err := os.Stat(filepath.Join(o.Libs, "kafka_2.13-"+kafkaVersion(o.Libs)+".jar")); err != nil {
		return nil, fmt.Errorf("apache kafka: %s holds no kafka_2.13 jar (run make kafka-jars): %w", o.Libs, err)
	}
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	if o.HeapMB <= 0 {
		o.HeapMB = 384
	}
	if o.JVMOpts == nil {
		o.JVMOpts = defaultJVMOpts
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Java == "" {
		o.Java = "java"
		if home := os.Getenv("JAVA_HOME"); home != "" {
			o.Java = filepath.Join(home, "bin", "java")
		}
	}
	removeAbandonedApacheDirs()
	dir, err := os.MkdirTemp(apacheTempRoot(), apacheDirPrefix)
	if err != nil {
		return nil, err
	}
	// The owner's PID lets a later start tell an abandoned directory from
	// one a live test binary is using.
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	a := &Apache{dir: dir, network: o.Network, libs: o.Libs, java: o.Java}
	if err := a.start(ctx, o); err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

// kafkaVersion reads the broker's version from the jar name in libs, so
// that the harness does not repeat the pom's pin.
func kafkaVersion(libs string) string {
	m, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-*.jar"))
	for _, p := range m {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "kafka_2.13-"), ".jar")
		if !strings.ContainsAny(v, "-") { // not -sources, -test
			return v
		}
	}
	return "?"
}

func (a *Apache) start(ctx context.Context, o ApacheOptions) error {
	// Two ports per node: the client listener and the controller's, and
	// a third for SASL. All are chosen before any node starts, because
	// every node's config names every controller.
	ports, err := freePorts(a.listen, o.Host, 3*o.Nodes)
	if err != nil {
		return err
	}
	addr := func(port int) string { return net.JoinHostPort(o.Host, strconv.Itoa(port)) }
	var voters []string
	for i := 0; i < o.Nodes; i++ {
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, addr(ports[2*i+1])))
		a.bootstrap = append(a.bootstrap, addr(ports[2*i]))
		if o.SASL != nil {
			a.sasl = append(a.sasl, addr(ports[2*o.Nodes+i]))
		}
	}
	clusterID := newClusterID()
	rf := strconv.Itoa(min(3, o.Nodes))
	for i := 0; i < o.Nodes; i++ {
		n := &apacheNode{id: i + 1, dir: filepath.Join(a.dir, fmt.Sprintf("node-%d", i+1))}
		n.log = filepath.Join(n.dir, "server.log")
		if err := os.MkdirAll(filepath.Join(n.dir, "data"), 0o700); err != nil {
			return err
		}
		props := map[string]string{
			"process.roles":                                    "broker,controller",
			"node.id":                                          strconv.Itoa(n.id),
			"controller.quorum.voters":                         strings.Join(voters, ","),
			"listeners":                                        "PLAINTEXT://" + addr(ports[2*i]) + ",CONTROLLER://" + addr(ports[2*i+1]),
			"advertised.listeners":                             "PLAINTEXT://" + addr(ports[2*i]),
			"controller.listener.names":                        "CONTROLLER",
			"inter.broker.listener.name":                       "PLAINTEXT",
			"listener.security.protocol.map":                   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"log.dirs":                                         filepath.Join(n.dir, "data"),
			"auto.create.topics.enable":                        "false",
			"offsets.topic.replication.factor":                 rf,
			"transaction.state.log.replication.factor":         rf,
			"transaction.state.log.min.isr":                    "1",
			"share.coordinator.state.topic.replication.factor": rf,
			"share.coordinator.state.topic.min.isr":            "1",
			"min.insync.replicas":                              "1",
			// A loaded 2-core machine stalls a JVM for seconds at a time;
			// with the defaults (2 s Raft fetch timeout, 9 s broker session)
			// the quorum then holds elections and fences brokers instead of
			// starting.
			"controller.quorum.fetch.timeout.ms":    "20000",
			"controller.quorum.election.timeout.ms": "2000",
			"controller.quorum.request.timeout.ms":  "20000",
			"broker.session.timeout.ms":             "30000",
			// Tests seed records stamped in the past and the future; 4.x
			// refuses timestamps more than an hour ahead by default.
			"log.message.timestamp.after.max.ms": strconv.FormatInt(1<<62, 10),
			// Tests seed records stamped months ago (the runner's: March
			// 2026). The default 7-day time retention deletes them at the
			// next retention check, every 5 minutes: in the middle of a
			// test, or of a benchmark's rounds.
			"log.retention.ms": "-1",
			// Classic groups would wait 3 s for more members on every
			// first join.
			"group.initial.rebalance.delay.ms": "0",
			// KIP-848 groups: heartbeats as often as a test's member asks.
			"group.consumer.min.heartbeat.interval.ms": "100",
			"group.consumer.heartbeat.interval.ms":     "500",
			"group.consumer.min.session.timeout.ms":    "6000",
			// A static member that closed keeps its place this long.
			"group.consumer.session.timeout.ms":     "10000",
			"group.share.min.heartbeat.interval.ms": "100",
			// Many partitions on one small node: small preallocated index
			// files, a cleaner buffer that fits the small heap, few
			// threads.
			"log.index.size.max.bytes":          strconv.Itoa(1 << 20),
			"log.cleaner.dedupe.buffer.size":    strconv.Itoa(8 << 20),
			"log.cleaner.threads":               "1",
			"num.network.threads":               "2",
			"num.io.threads":                    "2",
			"num.recovery.threads.per.data.dir": "1",
			"num.replica.fetchers":              "1",
			"background.threads":                "2",
		}
		if o.SASL != nil {
			o.SASL.addListener(props, a.sasl[i])
		}
		for k, v := range o.Properties {
			props[k] = v
		}
		if err := writeProperties(filepath.Join(n.dir, "server.properties"), props); err != nil {
			return err
		}
		if err := writeLog4j(filepath.Join(n.dir, "log4j2.properties"), n.log); err != nil {
			return err
		}
		a.nodes = append(a.nodes, n)
	}

	// Format every node's storage (kafka-storage.sh format), in parallel.
	var wg sync.WaitGroup
	errs := make([]error, len(a.nodes))
	for i, n := range a.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := a.command(ctx, o.Java, append(a.jvmArgs(n, o, 64),
				"kafka.tools.StorageTool", "format", "--cluster-id", clusterID,
				"--config", filepath.Join(n.dir, "server.properties"))...)
			setProcessGroup(cmd)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("format node %d: %w\n%s", n.id, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	// Start the nodes (kafka-server-start.sh: kafka.Kafka).
	for _, n := range a.nodes {
		out, err := os.OpenFile(filepath.Join(n.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		// The node outlives ctx: Stop ends it.
		n.cmd = a.command(context.Background(), o.Java, append(a.jvmArgs(n, o, o.HeapMB), "kafka.Kafka", filepath.Join(n.dir, "server.properties"))...)
		n.cmd.Stdout, n.cmd.Stderr = out, out
		setProcessGroup(n.cmd)
		n.exited = make(chan struct{})
		if err := startHeld(n.cmd, n.exited); err != nil {
			_ = out.Close()
			n.cmd, n.exited = nil, nil
			return fmt.Errorf("start node %d: %w", n.id, err)
		}
		go func() {
			n.waitErr = n.cmd.Wait()
			_ = out.Close()
			close(n.exited)
		}()
	}
	return a.waitReady(ctx)
}

// command runs a JVM in the cluster's network namespace.
func (a *Apache) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if a.network != nil {
		return a.network.Command(ctx, name, args...)
	}
	return exec.CommandContext(ctx, name, args...)
}

func (a *Apache) listen(network, address string) (net.Listener, error) {
	if a.network != nil {
		return a.network.Listen(network, address)
	}
	return net.Listen(network, address)
}

// ClientOpts are what a franz-go client needs besides the bootstrap list
// to reach the cluster: a dialer into its network namespace, if it has one.
func (a *Apache) ClientOpts() []kgo.Opt {
	if a.network == nil {
		return nil
	}
	return []kgo.Opt{kgo.Dialer(a.network.DialContext)}
}

func (a *Apache) jvmArgs(n *apacheNode, o ApacheOptions, heapMB int) []string {
	args := []string{fmt.Sprintf("-Xmx%dm", heapMB), fmt.Sprintf("-Xms%dm", min(heapMB, 64))}
	args = append(args, o.JVMOpts...)
	return append(args,
		"-Dlog4j2.configurationFile="+filepath.Join(n.dir, "log4j2.properties"),
		"-Dkafka.logs.dir="+n.dir,
		"-cp", filepath.Join(o.Libs, "*"))
}

// waitReady waits until every broker is registered (unfenced brokers are
// the ones Metadata lists) and the group coordinator of a group answers,
// which also creates __consumer_offsets, so that the first test does not
// pay for it inside its own timeouts.
func (a *Apache) waitReady(ctx context.Context) error {
	cl, err := kgo.NewClient(append(a.ClientOpts(), kgo.SeedBrokers(a.bootstrap...), kgo.ClientID("kafkatest-apache-ready"))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for {
		for _, n := range a.nodes {
			select {
			case <-n.exited:
				return fmt.Errorf("apache kafka node %d exited during start (%w); its log:\n%s", n.id, n.waitErr, tail(n.log, 40)+tail(filepath.Join(n.dir, "stdout.log"), 20))
			default:
			}
		}
		last = a.ready(ctx, cl, adm)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("apache kafka not ready: %w (last: %w); the nodes' logs:\n%s", ctx.Err(), last, a.Logs(25))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (a *Apache) ready(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ids, err := brokerIDs(rctx, cl)
	if err != nil {
		return err
	}
	if len(ids) < len(a.nodes) {
		return fmt.Errorf("%d of %d brokers registered", len(ids), len(a.nodes))
	}
	resp := adm.FindGroupCoordinators(rctx, "kafkatest-ready")
	for _, r := range resp {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// brokerIDs asks a broker for the brokers it knows. It is a request of its
// own: kadm's BrokerMetadata answers from the client's metadata cache, which
// can keep a list from before the last broker registered.
func brokerIDs(ctx context.Context, cl *kgo.Client) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // no topics: brokers only
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(resp.Brokers))
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	return ids, nil
}

// Bootstrap lists the brokers' client listeners.
func (a *Apache) Bootstrap() []string { return append([]string(nil), a.bootstrap...) }

// Dir is the directory holding every node's config, data and log.
func (a *Apache) Dir() string { return a.dir }

// PIDs are the nodes' process IDs, for tests of the harness itself.
func (a *Apache) PIDs() []int {
	var out []int
	for _, n := range a.nodes {
		if n.cmd != nil && n.cmd.Process != nil {
			out = append(out, n.cmd.Process.Pid)
		}
	}
	return out
}

// Stop kills every node's process group by PID, waits for the processes
// to be gone, and removes the cluster's directory. There is no clean
// shutdown: the data is thrown away, and a controlled shutdown of the last
// nodes of a quorum waits for controllers that are already gone.
func (a *Apache) Stop() {
	for _, n := range a.nodes {
		if n.cmd == nil || n.cmd.Process == nil {
			continue
		}
		killProcessGroup(n.cmd.Process.Pid)
	}
	for _, n := range a.nodes {
		if n.exited != nil {
			<-n.exited
		}
	}
	_ = os.RemoveAll(a.dir)
}

// Logs returns the last lines of every node's log, for a failing test.
func (a *Apache) Logs(lines int) string {
	var b strings.Builder
	for _, n := range a.nodes {
		fmt.Fprintf(&b, "== node %d (%s)\n%s== its stdout and stderr\n%s", n.id, n.log, tail(n.log, lines), tail(filepath.Join(n.dir, "stdout.log"), lines))
	}
	return b.String()
}

// freePorts reserves n distinct ports of host by listening on port 0, then
// releases them for the nodes to bind.
func freePorts(listen func(network, address string) (net.Listener, error), host string, n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// newClusterID makes a KRaft cluster ID as kafka-storage.sh random-uuid
// does: 16 random bytes, URL-safe base64 without padding, drawn again when
// it starts with '-' (as Kafka's Uuid.randomUuid does): the storage tool
// would read such an ID as an option and fail the start, one time in 64.
func newClusterID() string {
	b := make([]byte, 16)
	for {
		_, _ = rand.Read(b)
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}

func writeProperties(path string, props map[string]string) error {
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeLog4j sends the node's log (warnings, and the start-up banner) to
// one file the harness prints when the node fails.
func writeLog4j(path, logFile string) error {
	conf := strings.Join([]string{
		"status = warn",
		"appender.file.type = File",
		"appender.file.name = FILE",
		"appender.file.fileName = " + logFile,
		"appender.file.layout.type = PatternLayout",
		"appender.file.layout.pattern = [%d] %p %m (%c)%n",
		"rootLogger.level = " + logLevel(),
		"rootLogger.appenderRef.file.ref = FILE",
		"logger.server.name = kafka.server.KafkaRaftServer",
		"logger.server.level = INFO",
		"",
	}, "\n")
	return os.WriteFile(path, []byte(conf), 0o600)
}

// logLevel is the nodes' log level: WARN, or KAFKA_REPLAY_TEST_APACHE_LOG
// (e.g. INFO) to see what a cluster did.
func logLevel() string {
	if l := os.Getenv("KAFKA_REPLAY_TEST_APACHE_LOG"); l != "" {
		return l
	}
	return "WARN"
}

func tail(path string, lines int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	defer func() { _ = f.Close() }()
	var ring []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		ring = append(ring, sc.Text())
		if len(ring) > lines {
			ring = ring[1:]
		}
	}
	return strings.Join(ring, "\n") + "\n"
}

// removeAbandonedApacheDirs removes the directories of earlier test
// binaries that were killed before their Stop ran (their Java processes
// died with them: see setProcessGroup).
func removeAbandonedApacheDirs() {
	dirs, _ := filepath.Glob(filepath.Join(apacheTempRoot(), apacheDirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// apacheTempRoot is where the clusters' directories go: tmpfs where there
// is one, because the KRaft metadata log syncs every write to disk, and on
// a machine busy with builds one fsync can take seconds. The data is
// thrown away at Stop anyway.
func apacheTempRoot() string {
	if f, err := os.CreateTemp("/dev/shm", apacheDirPrefix+"probe-"); err == nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return "/dev/shm"
	}
	return os.TempDir()
}
