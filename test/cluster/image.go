package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ImageFile is one file of a single-layer image.
type ImageFile struct {
	// Path inside the image, without a leading slash.
	Path string
	Mode int64
	Data []byte
}

// WriteImageArchive writes a single-layer OCI image archive, importable
// with `ctr images import`, that holds files and runs entrypoint as user
// (e.g. "65532:65532"; empty means root). No registry and no image builder
// are needed: the layer is a tar, the rest is JSON.
func WriteImageArchive(out, ref string, files []ImageFile, entrypoint []string, user string) error {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	dirs := map[string]bool{}
	for _, f := range files {
		// Parent directories first, as image layers expect.
		parts := strings.Split(filepath.Dir(f.Path), "/")
		for i := range parts {
			d := strings.Join(parts[:i+1], "/")
			if d == "." || dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}

	blobs := map[string][]byte{}
	add := func(b []byte) (string, int) {
		sum := sha256.Sum256(b)
		d := hex.EncodeToString(sum[:])
		blobs[d] = b
		return "sha256:" + d, len(b)
	}
	layerDigest, layerSize := add(layer.Bytes())
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"Entrypoint": entrypoint,
			"User":       user,
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	if err != nil {
		return err
	}
	cfgDigest, cfgSize := add(cfg)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfgDigest, "size": cfgSize},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layerSize}},
	})
	if err != nil {
		return err
	}
	mDigest, mSize := add(manifest)
	tag := ref[strings.LastIndex(ref, ":")+1:]
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mDigest, "size": mSize,
			"platform":    map[string]string{"architecture": "amd64", "os": "linux"},
			"annotations": map[string]string{"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag},
		}},
	})
	if err != nil {
		return err
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	aw := tar.NewWriter(f)
	put := func(name string, b []byte) error {
		if err := aw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := aw.Write(b)
		return err
	}
	if err := put("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := put("index.json", index); err != nil {
		return err
	}
	for d, b := range blobs {
		if err := put("blobs/sha256/"+d, b); err != nil {
			return err
		}
	}
	if err := aw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// BuildGoImage builds pkg (a main package of this module) as a static
// binary and writes an image archive that runs it as /<base name of pkg>,
// as the non-root user 65532.
func BuildGoImage(ctx context.Context, pkg, ref, out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin := out + ".bin"
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, b)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	_ = os.Remove(bin)
	name := filepath.Base(pkg)
	return WriteImageArchive(out, ref, []ImageFile{{Path: name, Mode: 0o755, Data: data}}, []string{"/" + name}, "65532:65532")
}

// moduleRoot is the directory of this module's go.mod, found from the
// working directory (tests run in their package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/kafka-replay/kafka-replay\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the kafka-replay module")
		}
		dir = parent
	}
}

// ModuleRoot is the checkout's root directory.
func ModuleRoot() (string, error) { return moduleRoot() }
