// Package images tests the container images built from Dockerfile.runner and
// Dockerfile.launcher by images/build: the runner image replays a consumer
// group against an embedded Kafka cluster with a read-only root filesystem
// and a non-root user and resolves brokers by host name; both images are
// small, carry their OCI labels, run as 65532 and contain neither a shell
// nor a package manager. The launcher's binary is static; the runner's is
// linked against glibc, and its image holds exactly the shared libraries
// and the program interpreter that binary needs.
//
// It builds the images (podman with local stand-in bases on machines without
// a registry; docker when a docker engine answers), so it takes minutes cold
// and well under one minute warm. It is skipped only in -short mode.
package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

const (
	// The runner's goal is under 25 MB; the bound leaves room but still
	// catches a regression such as a distro base or a library too many.
	maxRunnerBytes   = 40 << 20
	maxLauncherBytes = 80 << 20

	nonroot = "65532:65532"
)

// image is one image under test.
type image struct {
	name   string // runner or launcher
	ref    string
	binary string // path of the entrypoint binary in the image
	// dynamic: the binary is linked against glibc and the image carries
	// its shared libraries; otherwise it must be static.
	dynamic   bool
	cgo       bool // built with CGO_ENABLED=1
	maxBytes  int64
	goalBytes int64 // 0: no goal beyond maxBytes
	wantTitle string
	revision  string // the revision label images/build was asked for
}

// engine runs docker or podman with the flags this kind of machine needs.
type engine struct {
	name string
	base []string // argv prefix: the CLI and its global flags
	run  []string // flags for `run` and `create` beyond the test's own
}

func detectEngine(t *testing.T) engine {
	t.Helper()
	name := os.Getenv("ENGINE")
	if name == "" {
		if _, err := exec.LookPath("docker"); err == nil && exec.Command("docker", "info").Run() == nil {
			name = "docker"
		} else {
			name = "podman"
		}
	}
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s not found: the image test needs podman (or a docker engine); .ci/run installs podman", name)
	}
	e := engine{name: name, base: []string{name}}
	limits := []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}
	if name == "podman" {
		runtime := os.Getenv("PODMAN_RUNTIME")
		if runtime == "" {
			runtime = "runc" // crun fails on these machines' hybrid cgroups
		}
		e.base = append(e.base, "--runtime", runtime)
		if d := os.Getenv("PODMAN_STORAGE_DRIVER"); d != "" {
			e.base = append(e.base, "--storage-driver", d)
		}
		// podman's --read-only adds writable tmpfs on /tmp, /var/tmp and
		// /run unless told not to; docker's does not. Without them the
		// root filesystem is read-only everywhere, as in a pod.
		e.run = append([]string{"--read-only-tmpfs=false"}, limits...)
	} else {
		e.run = limits
	}
	return e
}

func (e engine) cmd(ctx context.Context, args ...string) *exec.Cmd {
	argv := append(append([]string{}, e.base...), args...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// output runs the engine and fails the test on error, with its stderr.
func (e engine) output(t *testing.T, ctx context.Context, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	c := e.cmd(ctx, args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", e.name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "images", "build")); err != nil {
		t.Fatalf("images/build not found from %s: %v", root, err)
	}
	return root
}

func TestImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds container images (minutes cold); skipped in -short mode")
	}
	root := repoRoot(t)
	eng := detectEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()

	// Tags of this run's own, removed at the end (the layers stay cached):
	// another build of the :dev tags meanwhile (make images, the end-to-end
	// tests) cannot swap the images under test.
	tag := fmt.Sprintf("test-%d", time.Now().UnixNano())
	images := []image{{
		name: "runner", ref: "localhost/kafka-replay-runner:" + tag, binary: "runner", dynamic: true, cgo: true,
		maxBytes: maxRunnerBytes, goalBytes: 25 << 20, wantTitle: "kafka-replay-runner",
	}}
	if _, err := os.Stat(filepath.Join(root, "cmd", "launcher")); err == nil {
		images = append(images, image{
			name: "launcher", ref: "localhost/kafka-replay-launcher:" + tag, binary: "launcher",
			maxBytes: maxLauncherBytes, wantTitle: "kafka-replay-launcher",
		})
	} else {
		t.Log("cmd/launcher does not exist: testing the runner image only")
	}

	// Build both images from the real Dockerfiles, as a user would.
	start := time.Now()
	// --save: the archives the end-to-end tests import into containerd.
	saveDir := t.TempDir()
	build := exec.CommandContext(ctx, filepath.Join(root, "images", "build"), "--save", saveDir)
	build.Dir = root
	// A revision of the test's own: the label check then proves that no
	// stale cached layer kept an older build's labels.
	revision := "test-" + time.Now().UTC().Format("20060102T150405.000000000")
	if head, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		revision = strings.TrimSpace(string(head)) + "+" + revision
	}
	build.Env = append(os.Environ(), "ENGINE="+eng.name, "REVISION="+revision)
	for i := range images {
		images[i].revision = revision
	}
	for _, im := range images {
		build.Env = append(build.Env, strings.ToUpper(im.name)+"_IMAGE="+im.ref)
	}
	var buildLog bytes.Buffer
	build.Stdout, build.Stderr = &buildLog, &buildLog
	t.Cleanup(func() {
		for _, im := range images {
			_ = eng.cmd(context.Background(), "rmi", im.ref).Run()
		}
	})
	if err := build.Run(); err != nil {
		t.Fatalf("images/build: %v\n%s", err, tail(buildLog.String(), 80))
	}
	t.Logf("images/build with %s took %s", eng.name, time.Since(start).Round(time.Second))
	for _, line := range strings.Split(buildLog.String(), "\n") {
		if strings.HasPrefix(line, "== images/build:") {
			t.Log(line)
		}
	}

	t.Run("RunnerReplaysReadOnlyNonRoot", func(t *testing.T) {
		testRunnerReplay(t, ctx, eng, images[0].ref)
	})
	t.Run("RunnerResolvesBrokerHostName", func(t *testing.T) {
		testRunnerHostName(t, ctx, eng, images[0].ref)
	})
	for _, im := range images {
		t.Run("Config/"+im.name, func(t *testing.T) { testConfig(t, ctx, eng, im) })
		t.Run("Filesystem/"+im.name, func(t *testing.T) { testFilesystem(t, ctx, eng, im) })
		t.Run("Starts/"+im.name, func(t *testing.T) { testStarts(t, ctx, eng, im) })
		t.Run("Saved/"+im.name, func(t *testing.T) {
			testSaved(t, filepath.Join(saveDir, "kafka-replay-"+im.name+".tar"), im)
		})
	}
}

// testRunnerReplay runs the runner image the way a Job does: read-only root,
// user 65532, configuration through REPLAY_* variables, the result file and
// the termination message on mounts. The offsets an independent client reads
// back must be the result's new offsets.
func testRunnerReplay(t *testing.T, ctx context.Context, eng engine, ref string) {
	const (
		topic      = "orders"
		partitions = 4
		records    = 100
		group      = "billing"
		committed  = 80
	)
	c := kafkatest.New(t, 3) // listens on 127.0.0.1: reachable with --network host
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := c.Seed(ctx, topic, partitions, records, base, time.Second); err != nil {
		t.Fatalf("seed: %v", err)
	}
	offs := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < partitions; p++ {
		offs[topic][p] = committed
	}
	if err := c.Commit(ctx, group, offs, "consumer"); err != nil {
		t.Fatalf("commit: %v", err)
	}

	// The container user must be able to write the mounts, as with a
	// pod's emptyDir and the kubelet's termination-log file.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	term := filepath.Join(dir, "termination-log")
	if err := os.WriteFile(term, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(term, 0o666); err != nil { // umask
		t.Fatal(err)
	}
	runID := fmt.Sprintf("image-test-%d", time.Now().UnixNano())

	run := func(withTermination bool) (int, string, string) {
		t.Helper()
		args := []string{"run", "--rm", "--read-only", "--user", nonroot, "--network", "host"}
		args = append(args, eng.run...)
		args = append(args, "-v", dir+":/out")
		if withTermination {
			args = append(args, "-v", term+":/dev/termination-log")
		}
		args = append(args,
			"-e", "REPLAY_BOOTSTRAP_SERVERS="+c.Bootstrap(),
			"-e", "REPLAY_GROUP="+group,
			"-e", "REPLAY_TOPICS="+topic,
			"-e", "REPLAY_TO=shift:-30",
			"-e", "REPLAY_RUN_ID="+runID,
			"-e", "REPLAY_RESULT_FILE=/out/result.json",
			"-e", "REPLAY_OUTPUT=json",
			"-e", "REPLAY_TIMEOUT=60s",
			ref)
		var stdout, stderr bytes.Buffer
		cmd := eng.cmd(ctx, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("%s run: %v\n%s", eng.name, err, stderr.String())
		}
		t.Logf("runner container exited %d in %s", code, time.Since(start).Round(time.Millisecond))
		return code, stdout.String(), stderr.String()
	}

	code, stdout, stderr := run(true)
	if code != int(report.ExitOK) {
		t.Fatalf("runner exited %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	res := decode(t, filepath.Join(dir, "result.json"))
	if int(res.ExitCode) != code || res.Reason != report.ReasonApplied || res.DryRun || res.AlreadyApplied {
		t.Fatalf("result: exit %d reason %s dryRun %v alreadyApplied %v, want 0 Applied\n%s", res.ExitCode, res.Reason, res.DryRun, res.AlreadyApplied, stderr)
	}
	if res.RunID != runID || res.Group != group {
		t.Errorf("result runId %q group %q, want %q %q", res.RunID, res.Group, runID, group)
	}
	if len(res.Partitions) != partitions {
		t.Fatalf("result has %d partitions, want %d", len(res.Partitions), partitions)
	}
	got, err := c.Committed(ctx, group)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	for _, p := range res.Partitions {
		co, ok := got[p.Topic][p.Partition]
		switch {
		case !ok:
			t.Errorf("%s/%d: not committed", p.Topic, p.Partition)
		case co.Offset != p.NewOffset:
			t.Errorf("%s/%d: independent client reads %d, result says %d", p.Topic, p.Partition, co.Offset, p.NewOffset)
		case p.NewOffset != committed-30:
			t.Errorf("%s/%d: new offset %d, want %d (shift:-30 from %d)", p.Topic, p.Partition, p.NewOffset, committed-30, committed)
		case !strings.Contains(co.Metadata, "run="+runID):
			t.Errorf("%s/%d: commit metadata %q lacks run=%s", p.Topic, p.Partition, co.Metadata, runID)
		}
	}
	if res.Totals.MessagesToReconsume != partitions*30 {
		t.Errorf("messagesToReconsume %d, want %d", res.Totals.MessagesToReconsume, partitions*30)
	}
	// stdout carries the same result (--output json).
	if out, err := report.Decode([]byte(stdout)); err != nil {
		t.Errorf("stdout is not a result: %v\n%s", err, stdout)
	} else if out.RunID != runID || len(out.Partitions) != partitions {
		t.Errorf("stdout result differs from the result file: %+v", out)
	}
	// The termination message, through the mounted /dev/termination-log.
	tm := decode(t, term)
	if tm.RunID != runID || tm.Reason != report.ReasonApplied || tm.Totals.Partitions != partitions {
		t.Errorf("termination message: runId %q reason %s partitions %d", tm.RunID, tm.Reason, tm.Totals.Partitions)
	}
	if fi, err := os.Stat(term); err == nil && fi.Size() > report.MaxTerminationMessageBytes {
		t.Errorf("termination message is %d bytes, over %d", fi.Size(), report.MaxTerminationMessageBytes)
	}

	// A retried pod (same run ID) changes nothing and still exits 0, also
	// when there is no termination-log mount to write to.
	if err := os.Remove(filepath.Join(dir, "result.json")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(false)
	if code != 0 {
		t.Fatalf("rerun exited %d, want 0\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	again := decode(t, filepath.Join(dir, "result.json"))
	if !again.AlreadyApplied || again.Reason != report.ReasonAlreadyApplied {
		t.Errorf("rerun: alreadyApplied %v reason %s, want true AlreadyApplied", again.AlreadyApplied, again.Reason)
	}
	after, err := c.Committed(ctx, group)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	for p := int32(0); p < partitions; p++ {
		if o := after[topic][p].Offset; o != committed-30 {
			t.Errorf("%s/%d: %d after the rerun, want %d (a retry must not shift twice)", topic, p, o, committed-30)
		}
	}
}

// testRunnerHostName gives the runner its brokers by a host name that only
// the container's /etc/hosts knows (--add-host, as a pod's hostAliases).
// librdkafka resolves it with glibc's getaddrinfo, so through the image's
// /etc/nsswitch.conf and the files module inside its libc. As a control,
// the same run with an nsswitch.conf that asks DNS only must fail to
// resolve the name and change nothing: the name really came from
// /etc/hosts, through the image's NSS configuration.
func testRunnerHostName(t *testing.T, ctx context.Context, eng engine, ref string) {
	const (
		host       = "kafka.replay.invalid" // .invalid: never in DNS (RFC 6761)
		topic      = "payments"
		partitions = 2
		group      = "ledger"
		committed  = 40
	)
	c := kafkatest.New(t, 3) // listens on 127.0.0.1: reachable with --network host
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := c.Seed(ctx, topic, partitions, 50, base, time.Second); err != nil {
		t.Fatalf("seed: %v", err)
	}
	offs := kafkatest.Offsets{topic: {0: committed, 1: committed}}
	if err := c.Commit(ctx, group, offs, "consumer"); err != nil {
		t.Fatalf("commit: %v", err)
	}
	bootstrap := strings.ReplaceAll(c.Bootstrap(), "127.0.0.1:", host+":")
	if bootstrap == c.Bootstrap() {
		t.Fatalf("bootstrap %s has no 127.0.0.1 address to name", c.Bootstrap())
	}
	dnsOnly := filepath.Join(t.TempDir(), "nsswitch.conf")
	if err := os.WriteFile(dnsOnly, []byte("hosts: dns\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	run := func(runID string, extra ...string) (int, string, string) {
		t.Helper()
		args := []string{"run", "--rm", "--read-only", "--user", nonroot, "--network", "host", "--add-host", host + ":127.0.0.1"}
		args = append(args, eng.run...)
		args = append(args, extra...)
		args = append(args,
			"-e", "REPLAY_BOOTSTRAP_SERVERS="+bootstrap,
			"-e", "REPLAY_GROUP="+group,
			"-e", "REPLAY_TOPICS="+topic,
			"-e", "REPLAY_TO=shift:-10",
			"-e", "REPLAY_RUN_ID="+runID,
			"-e", "REPLAY_OUTPUT=json",
			"-e", "REPLAY_TERMINATION_MESSAGE_PATH=",
			"-e", "REPLAY_TIMEOUT=60s",
			ref)
		var stdout, stderr bytes.Buffer
		cmd := eng.cmd(ctx, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return exit.ExitCode(), stdout.String(), stderr.String()
		case err != nil:
			t.Fatalf("%s run: %v\n%s", eng.name, err, stderr.String())
		}
		return 0, stdout.String(), stderr.String()
	}
	unchanged := func(want int64) {
		t.Helper()
		got, err := c.Committed(ctx, group)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		for p := int32(0); p < partitions; p++ {
			if o := got[topic][p].Offset; o != want {
				t.Errorf("%s/%d: committed %d, want %d", topic, p, o, want)
			}
		}
	}

	// The control: no "files", so /etc/hosts is never read.
	code, _, stderr := run(fmt.Sprintf("image-dns-only-%d", time.Now().UnixNano()), "-v", dnsOnly+":/etc/nsswitch.conf:ro")
	if code == int(report.ExitOK) {
		t.Fatalf("with \"hosts: dns\" the runner still reached %s: the check below would prove nothing\n%s", host, stderr)
	}
	if !strings.Contains(stderr, "does not resolve") {
		t.Errorf("with \"hosts: dns\": exit %d, want a resolution failure\n%s", code, stderr)
	}
	unchanged(committed)

	// The image as built.
	code, stdout, stderr := run(fmt.Sprintf("image-host-name-%d", time.Now().UnixNano()))
	if code != int(report.ExitOK) {
		t.Fatalf("runner with brokers %s exited %d, want 0\nstderr:\n%s", bootstrap, code, stderr)
	}
	res, err := report.Decode([]byte(stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, stdout)
	}
	if res.Reason != report.ReasonApplied || len(res.Partitions) != partitions {
		t.Errorf("result: reason %s, %d partitions; want Applied, %d", res.Reason, len(res.Partitions), partitions)
	}
	unchanged(committed - 10)
}

func decode(t *testing.T, file string) *report.Result {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	r, err := report.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	return r
}

// inspected is what both engines' `image inspect` report and the test needs.
type inspected struct {
	Size   int64
	Config struct {
		User       string
		Entrypoint []string
		Env        []string
		Labels     map[string]string
	}
}

func testConfig(t *testing.T, ctx context.Context, eng engine, im image) {
	var all []inspected
	if err := json.Unmarshal(eng.output(t, ctx, "image", "inspect", im.ref), &all); err != nil || len(all) != 1 {
		t.Fatalf("image inspect %s: %v (%d images)", im.ref, err, len(all))
	}
	info := all[0]
	size := fmt.Sprintf("%s image %s: %d bytes (%.1f MiB)", im.name, im.ref, info.Size, float64(info.Size)/(1<<20))
	if im.goalBytes > 0 {
		size += fmt.Sprintf("; goal %d MiB", im.goalBytes>>20)
		if info.Size > im.goalBytes {
			size += " MISSED"
		}
	}
	t.Log(size)
	if info.Size > im.maxBytes {
		t.Errorf("%s image is %d bytes, over the %d MiB bound", im.name, info.Size, im.maxBytes>>20)
	}
	if info.Config.User != nonroot {
		t.Errorf("user %q, want %q", info.Config.User, nonroot)
	}
	if want := []string{"/" + im.binary}; strings.Join(info.Config.Entrypoint, " ") != strings.Join(want, " ") {
		t.Errorf("entrypoint %q, want %q", info.Config.Entrypoint, want)
	}
	labels := info.Config.Labels
	for _, k := range []string{"source", "version", "revision", "licenses", "title", "description"} {
		if labels["org.opencontainers.image."+k] == "" {
			t.Errorf("label org.opencontainers.image.%s missing", k)
		}
	}
	if got := labels["org.opencontainers.image.title"]; got != im.wantTitle {
		t.Errorf("title label %q, want %q", got, im.wantTitle)
	}
	// The test gives images/build a revision of its own: a different one
	// means a cached layer from an older build kept its labels.
	if got := labels["org.opencontainers.image.revision"]; got != im.revision {
		t.Errorf("revision label %q, want %q", got, im.revision)
	}
	t.Logf("labels: version=%s revision=%s licenses=%s", labels["org.opencontainers.image.version"],
		labels["org.opencontainers.image.revision"], labels["org.opencontainers.image.licenses"])
}

// Base names that must not be in either image: shells, busybox and package
// managers. Checked anywhere in the tree, not only in bin/.
var forbidden = map[string]bool{
	"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true, "busybox": true,
	"apt": true, "apt-get": true, "dpkg": true, "apk": true, "rpm": true, "yum": true, "dnf": true, "microdnf": true,
}

// testFilesystem exports the image's filesystem and checks what is in it:
// only the binary, the CA bundle, the user database and, for a dynamically
// linked binary, /etc/nsswitch.conf and exactly the shared libraries and the
// interpreter the binary needs; nothing a shell or package manager could be;
// nothing writable by the user.
func testFilesystem(t *testing.T, ctx context.Context, eng engine, im image) {
	id := strings.TrimSpace(string(eng.output(t, ctx, "create", im.ref)))
	defer func() { _ = eng.cmd(context.Background(), "rm", "-f", id).Run() }()
	export := filepath.Join(t.TempDir(), "fs.tar")
	eng.output(t, ctx, "export", "-o", export, id)

	f, err := os.Open(export)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allowed := map[string]bool{
		im.binary: true, "etc/passwd": true, "etc/group": true, "etc/ssl/certs/ca-certificates.crt": true,
	}
	if im.dynamic {
		allowed["etc/nsswitch.conf"] = true
	}
	var listing []string
	files := map[string][]byte{} // every regular file of the image's own
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read export: %v", err)
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if forbidden[path.Base(name)] {
			t.Errorf("%s image contains %s", im.name, name)
		}
		engineMount := h.Size == 0 && isEngineMount(name)
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default: // links, devices: none expected (the libraries are copied, not linked)
			if !engineMount {
				t.Errorf("%s image contains %s (type %c)", im.name, name, h.Typeflag)
			}
			continue
		}
		if engineMount {
			continue
		}
		listing = append(listing, fmt.Sprintf("%s (%d bytes, %s, %d:%d)", name, h.Size, os.FileMode(h.Mode).Perm(), h.Uid, h.Gid))
		if h.Uid != 0 || h.Mode&0o022 != 0 {
			t.Errorf("%s: owner %d mode %o, want root-owned and not writable by others", name, h.Uid, h.Mode)
		}
		if name == im.binary && h.Mode&0o111 == 0 {
			t.Errorf("%s: mode %o, not executable", name, h.Mode)
		}
		if files[name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(listing)
	t.Logf("%s image files:\n  %s", im.name, strings.Join(listing, "\n  "))
	bin := files[im.binary]
	if bin == nil {
		t.Fatalf("%s image has no /%s", im.name, im.binary)
	}
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("etc/passwd has no nonroot 65532 entry:\n%s", files["etc/passwd"])
	}
	assertBuild(t, im, bin)
	if im.dynamic {
		for lib := range assertDynamic(t, im.binary, bin, files) {
			allowed[lib] = true
		}
		// Without "files" first, glibc asks DNS first and stops at its "no
		// such name": /etc/hosts entries (a pod's hostAliases) would not
		// resolve. testRunnerHostName shows the effect; this names the cause.
		if nss := string(files["etc/nsswitch.conf"]); !regexp.MustCompile(`(?m)^hosts:\s+files\s+dns\s*$`).MatchString(nss) {
			t.Errorf("etc/nsswitch.conf has no \"hosts: files dns\" line:\n%s", nss)
		}
	} else {
		assertStatic(t, im.binary, bin)
	}
	for name := range files {
		if !allowed[name] {
			t.Errorf("%s image contains unexpected file %s", im.name, name)
		}
	}
	for name := range allowed {
		if files[name] == nil {
			t.Errorf("%s image lacks %s", im.name, name)
		}
	}
}

// isEngineMount is a file an engine may create in a container's rootfs to
// mount over (hosts, resolv.conf, .containerenv); never part of the image.
func isEngineMount(name string) bool {
	switch name {
	case "etc/hosts", "etc/hostname", "etc/resolv.conf", "run/.containerenv", ".dockerenv":
		return true
	}
	return strings.HasPrefix(name, "dev/") || strings.HasPrefix(name, "proc/") || strings.HasPrefix(name, "sys/")
}

// assertBuild checks how the binary was built, from its Go build info: the
// runner the image ships must be the build make bench measures (cgo, glibc:
// no musl tag), trimmed and stripped.
func assertBuild(t *testing.T, im image, b []byte) {
	t.Helper()
	info, err := buildinfo.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: no Go build info: %v", im.binary, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	wantCgo := "0"
	if im.cgo {
		wantCgo = "1"
	}
	if got := settings["CGO_ENABLED"]; got != wantCgo {
		t.Errorf("%s: CGO_ENABLED=%q, want %s", im.binary, got, wantCgo)
	}
	for _, tag := range strings.Split(settings["-tags"], ",") {
		if tag == "musl" {
			t.Errorf("%s: built with -tags %s: the musl build is not what make bench measures", im.binary, settings["-tags"])
		}
	}
	if settings["-trimpath"] != "true" {
		t.Errorf("%s: not built with -trimpath (settings %v)", im.binary, settings)
	}
	// -trimpath leaves -ldflags out of the build info (it may hold paths),
	// so -s -w show as what they do: no symbol table, no DWARF.
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not an ELF binary: %v", im.binary, err)
	}
	defer ef.Close()
	for _, sec := range ef.Sections {
		if sec.Name == ".symtab" || strings.HasPrefix(sec.Name, ".debug_") || strings.HasPrefix(sec.Name, ".zdebug_") {
			t.Errorf("%s has a %s section: not built with -ldflags '-s -w'", im.binary, sec.Name)
		}
	}
	t.Logf("%s: %s, CGO_ENABLED=%s -tags=%q -trimpath=%s, stripped", im.binary, info.GoVersion, settings["CGO_ENABLED"], settings["-tags"], settings["-trimpath"])
}

// assertStatic checks an ELF binary needs no loader and no shared library.
func assertStatic(t *testing.T, name string, b []byte) {
	t.Helper()
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not an ELF binary: %v", name, err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a PT_INTERP program header: dynamically linked", name)
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Logf("%s has a PT_DYNAMIC segment (static-pie?)", name)
		}
	}
	libs, err := ef.ImportedLibraries()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", name, libs)
	}
	t.Logf("%s: static ELF %s/%s, %d bytes, no PT_INTERP, no DT_NEEDED", name, ef.Class, ef.Machine, len(b))
}

// assertDynamic checks a dynamically linked binary against the image's
// files (path without the leading slash -> content): its program
// interpreter is at the path the binary names, and every DT_NEEDED entry,
// the binary's and each library's own, is a file of the binary's class and
// machine in a directory the loader searches. It returns the files the
// binary needs, interpreter included.
func assertDynamic(t *testing.T, name string, b []byte, files map[string][]byte) map[string]bool {
	t.Helper()
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not an ELF binary: %v", name, err)
	}
	defer ef.Close()
	interp := ""
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			raw, err := io.ReadAll(p.Open())
			if err != nil {
				t.Fatalf("%s: PT_INTERP: %v", name, err)
			}
			interp = strings.TrimRight(string(raw), "\x00")
		}
	}
	if interp == "" {
		t.Fatalf("%s has no PT_INTERP: not dynamically linked, so the image's libraries would be dead weight", name)
	}
	// glibc's own search path on Debian (multiarch), no ld.so.cache in the
	// image; plus the interpreter's directory, where its soname lives.
	var triplet string
	switch ef.Machine {
	case elf.EM_X86_64:
		triplet = "x86_64-linux-gnu"
	case elf.EM_AARCH64:
		triplet = "aarch64-linux-gnu"
	default:
		t.Fatalf("%s: machine %s: no library directories known", name, ef.Machine)
	}
	dirs := []string{"lib/" + triplet, "usr/lib/" + triplet, "lib", "usr/lib", strings.TrimPrefix(path.Dir(interp), "/")}

	need := map[string]bool{}
	same := func(file string, raw []byte) []string {
		lf, err := elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s is not an ELF file: %v", file, err)
			return nil
		}
		defer lf.Close()
		if lf.Class != ef.Class || lf.Machine != ef.Machine {
			t.Errorf("%s is %s/%s, the binary %s/%s", file, lf.Class, lf.Machine, ef.Class, ef.Machine)
		}
		libs, err := lf.ImportedLibraries()
		if err != nil {
			t.Errorf("%s: %v", file, err)
		}
		return libs
	}
	ip := strings.TrimPrefix(interp, "/")
	if raw := files[ip]; raw == nil {
		t.Errorf("%s's interpreter %s is not in the image", name, interp)
	} else {
		need[ip] = true
		same(ip, raw)
	}
	queue, err := ef.ImportedLibraries()
	if err != nil || len(queue) == 0 {
		t.Fatalf("%s: DT_NEEDED %v (%v): want the shared libraries it links", name, queue, err)
	}
	direct := strings.Join(queue, " ")
	seen := map[string]bool{}
	for len(queue) > 0 {
		lib := queue[0]
		queue = queue[1:]
		if seen[lib] {
			continue
		}
		seen[lib] = true
		found := ""
		for _, d := range dirs {
			if p := path.Join(d, lib); files[p] != nil {
				found = p
				break
			}
		}
		if found == "" {
			t.Errorf("%s needs %s: in none of the loader's directories %v", name, lib, dirs)
			continue
		}
		need[found] = true
		queue = append(queue, same(found, files[found])...)
	}
	var list []string
	for p := range need {
		list = append(list, "/"+p)
	}
	sort.Strings(list)
	t.Logf("%s: dynamic ELF %s/%s, interpreter %s, DT_NEEDED %s; in the image: %s", name, ef.Class, ef.Machine, interp, direct, strings.Join(list, " "))
	return need
}

// testStarts runs the binary's --help in the image (read-only, non-root,
// nothing mounted): it must start on a scratch base and exit 0.
func testStarts(t *testing.T, ctx context.Context, eng engine, im image) {
	args := append([]string{"run", "--rm", "--read-only", "--user", nonroot, "--network", "none"}, eng.run...)
	args = append(args, im.ref, "--help")
	var out bytes.Buffer
	cmd := eng.cmd(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s --help in the image: %v\n%s", im.name, err, out.String())
	}
	if out.Len() == 0 {
		t.Errorf("%s --help printed nothing", im.name)
	}
}

// testSaved checks that images/build --save wrote a docker-archive of the
// image under its tag: what `ctr -n k8s.io images import` and `docker load`
// read.
func testSaved(t *testing.T, archive string, im image) {
	f, err := os.Open(archive)
	if err != nil {
		t.Fatalf("images/build --save: %v", err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		var b []byte
		if h.Name == "manifest.json" {
			if b, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		entries[h.Name] = b
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json: %v (%d images)", archive, err, len(manifest))
	}
	m := manifest[0]
	if len(m.RepoTags) != 1 || m.RepoTags[0] != im.ref {
		t.Errorf("%s: tags %q, want [%s]", archive, m.RepoTags, im.ref)
	}
	for _, name := range append([]string{m.Config}, m.Layers...) {
		if _, ok := entries[name]; !ok {
			t.Errorf("%s: manifest names %s, which is not in the archive", archive, name)
		}
	}
	// What a registry would store and a node would pull: gzip-compressed.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var compressed countingWriter
	zw := gzip.NewWriter(&compressed)
	n, err := io.Copy(zw, f)
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes (%.1f MiB; gzip %.1f MiB), %d layers, tag %s", filepath.Base(archive), n,
		float64(n)/(1<<20), float64(compressed)/(1<<20), len(m.Layers), strings.Join(m.RepoTags, ","))
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
