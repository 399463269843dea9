// Command krew builds kubectl-replay's release: the plugin cross-built with
// CGO_ENABLED=0 for each platform, one tar.gz per platform holding the
// binary and LICENSE, sha256sums.txt, and the krew manifest (replay.yaml,
// from replay.yaml.tmpl) naming each archive with its SHA-256. `make
// plugin-release` runs it; the archives are reproducible (fixed times,
// owners and order, -trimpath), so the same commit and Go give the same
// sums.
//
//	go run ./cmd/kubectl-replay/krew --version v0.1.0 --out dist/kubectl-replay
package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed replay.yaml.tmpl
var manifestTemplate string

// Names of what the release writes.
const (
	ManifestFile = "replay.yaml"
	SumsFile     = "sha256sums.txt"
	binaryName   = "kubectl-replay"
)

// DefaultPlatforms are the os/arch pairs released.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// Options say what to release.
type Options struct {
	Version   string
	Out       string
	Package   string   // the plugin's Go package
	License   string   // the file shipped beside the binary
	BaseURL   string   // where the archives will be downloadable from
	Platforms []string // os/arch
	Go        string   // the go command
	Dir       string   // where go build runs (the module root; "" is the current directory)
	Log       io.Writer
}

// Bin is the plugin's executable name on a platform.
func Bin(goos string) string {
	if goos == "windows" {
		return binaryName + ".exe"
	}
	return binaryName
}

// ArchiveName is a platform's archive file name.
func ArchiveName(version, goos, goarch string) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", binaryName, version, goos, goarch)
}

func main() {
	o := Options{Go: "go", Log: os.Stderr}
	var platforms string
	flag.StringVar(&o.Version, "version", "", "release version, semantic with a leading v (v0.1.0)")
	flag.StringVar(&o.Out, "out", "dist/kubectl-replay", "output directory (an earlier release in it is replaced; anything else there is refused)")
	flag.StringVar(&o.Package, "package", "./cmd/kubectl-replay", "the plugin's Go package")
	flag.StringVar(&o.License, "license", "LICENSE", "license file shipped in every archive")
	flag.StringVar(&o.BaseURL, "base-url", "", "URL the archives are downloaded from (default: the GitHub release of --version)")
	flag.StringVar(&platforms, "platforms", strings.Join(DefaultPlatforms, " "), "os/arch pairs, space- or comma-separated")
	flag.Parse()
	o.Platforms = strings.FieldsFunc(platforms, func(r rune) bool { return r == ' ' || r == ',' })
	if o.BaseURL == "" {
		o.BaseURL = "https://github.com/kafka-replay/kafka-replay/releases/download/" + o.Version
	}
	if err := Release(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "plugin-release:", err)
		os.Exit(1)
	}
}

// Release builds every platform's archive into o.Out, then the sums and the
// manifest, and checks the manifest it wrote.
func Release(ctx context.Context, o Options) error {
	if !semverRe.MatchString(o.Version) {
		return fmt.Errorf("--version %q is not a semantic version with a leading v (v0.1.0)", o.Version)
	}
	if len(o.Platforms) == 0 {
		return errors.New("--platforms is empty")
	}
	license, err := os.ReadFile(o.License)
	if err != nil {
		return fmt.Errorf("--license: %w", err)
	}
	if err := clearOut(o.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "plugin-release-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	data := RenderData{Version: o.Version}
	var sums strings.Builder
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
			return fmt.Errorf("--platforms: %q is not os/arch", p)
		}
		start := time.Now()
		bin := filepath.Join(tmp, goos+"_"+goarch, Bin(goos))
		if err := build(ctx, o, goos, goarch, bin); err != nil {
			return err
		}
		name := ArchiveName(o.Version, goos, goarch)
		archive := filepath.Join(o.Out, name)
		if err := writeArchive(archive, Bin(goos), bin, license); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sum, err := fileSHA256(archive)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		data.Platforms = append(data.Platforms, RenderPlatform{
			OS: goos, Arch: goarch, URI: strings.TrimSuffix(o.BaseURL, "/") + "/" + name, SHA256: sum, Bin: Bin(goos),
		})
		fmt.Fprintf(o.Log, "plugin-release: %s %s (%s)\n", name, sum, time.Since(start).Round(time.Second))
	}
	if err := os.WriteFile(filepath.Join(o.Out, SumsFile), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	manifest, err := Render(manifestTemplate, data)
	if err != nil {
		return err
	}
	p, err := ParseManifest(manifest)
	if err != nil {
		return err
	}
	if err := Validate(p, PluginName); err != nil {
		return fmt.Errorf("the rendered manifest is not valid krew: %w", err)
	}
	return os.WriteFile(filepath.Join(o.Out, ManifestFile), manifest, 0o644)
}

// clearOut empties the output directory of an earlier release, and only of
// that: a directory holding anything else (a mistyped --out .) is refused.
func clearOut(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		ours := e.Type().IsRegular() && (n == ManifestFile || n == SumsFile ||
			(strings.HasPrefix(n, binaryName+"_") && strings.HasSuffix(n, ".tar.gz")))
		if !ours {
			return fmt.Errorf("--out %s holds %s, which no release wrote: refusing to replace it", dir, n)
		}
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// build cross-compiles the plugin: no cgo (a static binary for every
// platform), -trimpath for reproducible builds, the version stamped in.
func build(ctx context.Context, o Options, goos, goarch, out string) error {
	cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath",
		"-ldflags", "-s -w -X main.version="+o.Version, "-o", out, o.Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Dir = o.Dir
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w", o.Package, goos, goarch, err)
	}
	return nil
}

// archiveTime is every entry's modification time: a fixed one, so that
// rebuilding the same binary gives the same archive and sum.
var archiveTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeArchive writes a tar.gz of the binary (as name, mode 0755) and
// LICENSE (0644), owned by root, in that order.
func writeArchive(path, name, bin string, license []byte) (err error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	gz.ModTime = archiveTime
	tw := tar.NewWriter(gz)
	for _, e := range []struct {
		name string
		mode int64
		body []byte
	}{{name, 0o755, exe}, {"LICENSE", 0o644, license}} {
		hdr := &tar.Header{
			Name: e.name, Mode: e.mode, Size: int64(len(e.body)), ModTime: archiveTime,
			Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(e.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
