package cluster

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// These run everywhere, -short included: no root, no cluster.

func TestTeardownRefusesDangerousDirs(t *testing.T) {
	// The state dir selects the processes to kill and the mounts to
	// remove: an empty or short one would match everything.
	for _, dir := range []string{"", "/", "/tmp", "/home", "relative/kafka-replay-cluster-1", "/x", "/tmp/kafka-replay-cluster-1/.."} {
		if err := teardown(dir, "kr-e2e-x", nil, t.Logf); err == nil {
			t.Errorf("teardown(%q) went ahead", dir)
		}
	}
	if err := teardown("/tmp/kafka-replay-cluster-x", "", nil, t.Logf); err == nil {
		t.Error("teardown without a namespace name went ahead")
	}
}

func TestSplitRule(t *testing.T) {
	got := splitRule(`-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -j KUBE-SVC-NPX46M4PTMTKRN6Y`)
	want := []string{"-A", "KUBE-SERVICES", "-d", "10.96.0.1/32", "-p", "tcp", "-m", "comment", "--comment", "default/kubernetes:https cluster IP", "-j", "KUBE-SVC-NPX46M4PTMTKRN6Y"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/tmp/a\040b/c`); got != "/tmp/a b/c" {
		t.Fatalf("got %q", got)
	}
}

func TestFirstIP(t *testing.T) {
	ip, err := firstIP("10.96.0.0/24")
	if err != nil || ip.String() != "10.96.0.1" {
		t.Fatalf("got %v, %v", ip, err)
	}
}

// TestWriteImageArchive: the archive is an OCI layout whose blobs match
// their digests and whose index names the image, as `ctr images import`
// expects.
func TestWriteImageArchive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := WriteImageArchive(out, "localhost/x:1", []ImageFile{{Path: "bin/x", Mode: 0o755, Data: []byte("hello")}}, []string{"/bin/x"}, "65532:65532"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
	}
	for name, b := range files {
		if d, ok := strings.CutPrefix(name, "blobs/sha256/"); ok {
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != d {
				t.Errorf("blob %s has the wrong digest", name)
			}
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	if index.Manifests[0].Annotations["io.containerd.image.name"] != "localhost/x:1" {
		t.Errorf("image name: %v", index.Manifests[0].Annotations)
	}
	if _, ok := files["blobs/sha256/"+strings.TrimPrefix(index.Manifests[0].Digest, "sha256:")]; !ok {
		t.Error("the index names a manifest that is not in the archive")
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %s", files["oci-layout"])
	}
}

// TestWriteKubeconfigIsPrivateAndWhole: the admin kubeconfig leaves the
// harness as an 0600 file replaced at once, and never over a directory or
// symlink.
func TestWriteKubeconfigIsPrivateAndWhole(t *testing.T) {
	dir := t.TempDir()
	c := &Cluster{dir: filepath.Join(dir, "state")}
	if err := os.MkdirAll(filepath.Join(c.dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(content string) {
		if err := os.WriteFile(c.Kubeconfig(), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(dir, "out", "nested", "kubeconfig")
	for _, content := range []string{"apiVersion: v1\n# first\n", "apiVersion: v1\n# second\n"} {
		write(content)
		if err := c.WriteKubeconfig(dst); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil || string(b) != content {
			t.Fatalf("kubeconfig %q, %v; want %q", b, err, content)
		}
		st, _ := os.Stat(dst)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600: it grants cluster-admin", st.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the kubeconfig: %v", entries)
	}
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{filepath.Join(dir, "out"), link} {
		if err := c.WriteKubeconfig(bad); err == nil {
			t.Errorf("WriteKubeconfig(%s) replaced a directory or symlink", bad)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Error("the symlink's target was written")
	}
}
