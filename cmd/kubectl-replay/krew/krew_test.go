package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var repoRoot = filepath.Join("..", "..", "..")

// krewVersion is the krew the test installs with when make does not give one
// (KREW); the Makefile's KREW_VERSION is the same.
const krewVersion = "v0.4.3"

// fakeRelease is what a release of every default platform renders the
// template with; its sums are digits only on purpose (YAML numbers unquoted).
func fakeRelease(version string) RenderData {
	d := RenderData{Version: version}
	for i, p := range DefaultPlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		d.Platforms = append(d.Platforms, RenderPlatform{
			OS: goos, Arch: goarch, Bin: Bin(goos),
			URI:    "https://example.com/releases/" + version + "/" + ArchiveName(version, goos, goarch),
			SHA256: strings.Repeat(fmt.Sprintf("%x", i+1), 64),
		})
	}
	return d
}

// The template renders a manifest krew accepts, one platform per archive.
func TestManifestTemplateIsValidKrew(t *testing.T) {
	d := fakeRelease("v1.2.3-rc.1")
	b, err := Render(manifestTemplate, d)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseManifest(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if err := Validate(p, PluginName); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if p.Spec.Version != "v1.2.3-rc.1" || len(p.Spec.Platforms) != len(DefaultPlatforms) {
		t.Fatalf("spec = %+v", p.Spec)
	}
	for i, pl := range p.Spec.Platforms {
		want := d.Platforms[i]
		if pl.Selector.MatchLabels["os"] != want.OS || pl.Selector.MatchLabels["arch"] != want.Arch ||
			pl.URI != want.URI || pl.SHA256 != want.SHA256 || pl.Bin != want.Bin {
			t.Errorf("platform %d = %+v, want %+v", i, pl, want)
		}
		if len(pl.Files) != 2 || pl.Files[0] != (FileOp{From: want.Bin, To: "."}) || pl.Files[1] != (FileOp{From: "LICENSE", To: "."}) {
			t.Errorf("platform %d files = %+v", i, pl.Files)
		}
	}
	if p.Spec.Platforms[len(p.Spec.Platforms)-1].Bin != "kubectl-replay.exe" {
		t.Error("the windows binary is not kubectl-replay.exe")
	}
}

// Render lets nothing into the YAML that could change its shape.
func TestRenderRefusesOddValues(t *testing.T) {
	for name, mutate := range map[string]func(*RenderData){
		"version not semver": func(d *RenderData) { d.Version = "1.2.3" },
		"version injection":  func(d *RenderData) { d.Version = "v1.2.3\n  caveats: x" },
		"uri not https":      func(d *RenderData) { d.Platforms[0].URI = "http://example.com/a.tar.gz" },
		"uri with a space":   func(d *RenderData) { d.Platforms[0].URI = "https://example.com/a b.tar.gz" },
		"uri with a newline": func(d *RenderData) { d.Platforms[0].URI = "https://example.com/a\nsha256: x" },
		"sha256 upper case":  func(d *RenderData) { d.Platforms[0].SHA256 = strings.Repeat("A", 64) },
		"os with a colon":    func(d *RenderData) { d.Platforms[0].OS = "linux: x" },
		"bin with a slash":   func(d *RenderData) { d.Platforms[0].Bin = "../kubectl-replay" },
	} {
		t.Run(name, func(t *testing.T) {
			d := fakeRelease("v1.0.0")
			mutate(&d)
			if b, err := Render(manifestTemplate, d); err == nil {
				t.Fatalf("rendered:\n%s", b)
			}
		})
	}
}

// Validate refuses what krew refuses, naming the field; without these the
// test above would prove nothing.
func TestValidateRefusesWhatKrewRefuses(t *testing.T) {
	good, err := Render(manifestTemplate, fakeRelease("v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, field string
		mutate      func(*Plugin)
	}{
		{"apiVersion", "apiVersion", func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }},
		{"kind", "kind", func(p *Plugin) { p.Kind = "Plugins" }},
		{"name", "metadata.name", func(p *Plugin) { p.Metadata.Name = "kafka-replay" }},
		{"short description", "spec.shortDescription", func(p *Plugin) { p.Spec.ShortDescription = "" }},
		{"version", "spec.version", func(p *Plugin) { p.Spec.Version = "1.0" }},
		{"no platforms", "spec.platforms", func(p *Plugin) { p.Spec.Platforms = nil }},
		{"uri", "uri", func(p *Plugin) { p.Spec.Platforms[1].URI = "" }},
		{"sha256", "sha256", func(p *Plugin) { p.Spec.Platforms[1].SHA256 = "abc" }},
		{"bin", "bin", func(p *Plugin) { p.Spec.Platforms[1].Bin = "" }},
		{"bin not copied", "not among the files", func(p *Plugin) { p.Spec.Platforms[1].Bin = "other" }},
		{"no files", "files is empty", func(p *Plugin) { p.Spec.Platforms[1].Files = nil }},
		{"no selector", "selector is not set", func(p *Plugin) { p.Spec.Platforms[1].Selector = nil }},
		{"empty selector", "selector is empty", func(p *Plugin) { p.Spec.Platforms[1].Selector = &Selector{} }},
		{"selector key", `selector key "distro"`, func(p *Plugin) { p.Spec.Platforms[1].Selector.MatchLabels["distro"] = "debian" }},
		{"duplicate platform", "also spec.platforms[0]", func(p *Plugin) { p.Spec.Platforms[1].Selector = p.Spec.Platforms[0].Selector }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseManifest(good)
			if err != nil {
				t.Fatal(err)
			}
			c.mutate(p)
			if err := Validate(p, PluginName); err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want one naming %s", err, c.field)
			}
		})
	}
	if _, err := ParseManifest(append(append([]byte{}, good...), "\nstatus: {}\n"...)); err == nil {
		t.Error("a field krew does not know was accepted")
	}
}

// The release `make plugin-release` wrote (PLUGIN_DIST), or, run alone,
// one this test builds for the host platform: a valid manifest whose every
// platform's sha256 is its archive's, in sha256sums.txt too; each archive
// holds exactly the plugin (executable, for that os/arch) and LICENSE.
func TestRelease(t *testing.T) {
	dir := os.Getenv("PLUGIN_DIST")
	if dir == "" {
		if testing.Short() {
			t.Skip("builds the plugin; run by make test-plugin-release")
		}
		dir = t.TempDir()
		err := Release(context.Background(), Options{
			Version: "v0.0.0-test", Out: dir, Package: "./cmd/kubectl-replay", License: filepath.Join(repoRoot, "LICENSE"),
			BaseURL: "https://example.com/dl", Platforms: []string{runtime.GOOS + "/" + runtime.GOARCH}, Go: "go", Dir: repoRoot, Log: io.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(p, PluginName); err != nil {
		t.Fatal(err)
	}
	sums := readSums(t, filepath.Join(dir, SumsFile))
	if len(sums) != len(p.Spec.Platforms) {
		t.Fatalf("%d sums for %d platforms", len(sums), len(p.Spec.Platforms))
	}
	license, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range p.Spec.Platforms {
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		name := ArchiveName(p.Spec.Version, goos, goarch)
		if !strings.HasSuffix(pl.URI, "/"+name) {
			t.Errorf("%s/%s: uri %s does not name %s", goos, goarch, pl.URI, name)
		}
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if pl.SHA256 != sum || sums[name] != sum {
			t.Errorf("%s: manifest sha256 %s, sha256sums.txt %s, archive %s", name, pl.SHA256, sums[name], sum)
		}
		files := untar(t, filepath.Join(dir, name))
		if len(files) != 2 || !bytes.Equal(files["LICENSE"].body, license) {
			t.Errorf("%s holds %v, want %s and LICENSE", name, keys(files), pl.Bin)
		}
		bin, ok := files[pl.Bin]
		if !ok || bin.mode&0o111 == 0 {
			t.Fatalf("%s: %s missing or not executable (%v)", name, pl.Bin, keys(files))
		}
		if got := binaryPlatform(t, bin.body); got != goos+"/"+goarch {
			t.Errorf("%s: %s is a %s binary", name, pl.Bin, got)
		}
	}
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok || !sha256Re.MatchString(sum) {
			t.Fatalf("%s: line %q is not sha256sum's format", path, s.Text())
		}
		out[name] = sum
	}
	return out
}

type tarFile struct {
	mode int64
	body []byte
}

func untar(t *testing.T, path string) map[string]tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "/") {
			t.Fatalf("%s: entry %q (type %c) is not a plain top-level file", path, h.Name, h.Typeflag)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = tarFile{mode: h.Mode, body: b}
	}
}

func keys(m map[string]tarFile) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// binaryPlatform reads an executable's header: ELF for linux, Mach-O for
// darwin, PE for windows, and its machine.
func binaryPlatform(t *testing.T, b []byte) string {
	t.Helper()
	r := bytes.NewReader(b)
	if f, err := elf.NewFile(r); err == nil {
		switch f.Machine {
		case elf.EM_X86_64:
			return "linux/amd64"
		case elf.EM_AARCH64:
			return "linux/arm64"
		}
		return "linux/" + f.Machine.String()
	}
	if f, err := macho.NewFile(r); err == nil {
		switch f.Cpu {
		case macho.CpuAmd64:
			return "darwin/amd64"
		case macho.CpuArm64:
			return "darwin/arm64"
		}
		return "darwin/" + f.Cpu.String()
	}
	if f, err := pe.NewFile(r); err == nil {
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			return "windows/amd64"
		case pe.IMAGE_FILE_MACHINE_ARM64:
			return "windows/arm64"
		}
		return fmt.Sprintf("windows/%#x", f.Machine)
	}
	return "unknown"
}

// A mistyped --out never deletes what a release did not write; an earlier
// release is replaced.
func TestReleaseRefusesForeignOut(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(keep, []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Release(context.Background(), Options{Version: "v1.0.0", Out: dir, License: filepath.Join(repoRoot, "LICENSE"), Platforms: []string{"linux/amd64"}, Go: "false"})
	if err == nil || !strings.Contains(err.Error(), "go.mod") {
		t.Fatalf("err = %v, want a refusal naming go.mod", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("go.mod is gone: %v", err)
	}
	old := t.TempDir()
	for _, n := range []string{ManifestFile, SumsFile, ArchiveName("v0.9.0", "linux", "amd64")} {
		if err := os.WriteFile(filepath.Join(old, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := clearOut(old); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(old); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

// krew itself installs the release for this machine's platform from the
// manifest and the local archive (it checks the manifest, picks the
// platform by its selector and verifies the sha256), and the installed
// plugin runs and reports the release's version. KREW is the krew binary
// (make builds it once from the module proxy); run alone, the test builds
// it.
func TestKrewInstallsTheRelease(t *testing.T) {
	dir := os.Getenv("PLUGIN_DIST")
	if dir == "" {
		if testing.Short() {
			t.Skip("builds the plugin and krew; run by make test-plugin-release")
		}
		dir = t.TempDir()
		if err := Release(context.Background(), Options{
			Version: "v0.0.0-test", Out: dir, Package: "./cmd/kubectl-replay", License: filepath.Join(repoRoot, "LICENSE"),
			BaseURL: "https://example.com/dl", Platforms: []string{runtime.GOOS + "/" + runtime.GOARCH}, Go: "go", Dir: repoRoot, Log: io.Discard,
		}); err != nil {
			t.Fatal(err)
		}
	}
	krew := os.Getenv("KREW")
	if krew == "" {
		gobin := t.TempDir()
		cmd := exec.Command("go", "install", "sigs.k8s.io/krew/cmd/krew@"+krewVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go install krew: %v\n%s", err, out)
		}
		krew = filepath.Join(gobin, "krew")
	}
	manifest, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	archive := filepath.Join(dir, ArchiveName(p.Spec.Version, runtime.GOOS, runtime.GOARCH))
	install := exec.Command(krew, "install", "--manifest="+filepath.Join(dir, ManifestFile), "--archive="+archive)
	install.Env = append(os.Environ(), "KREW_ROOT="+root, "KREW_NO_UPGRADE_CHECK=1")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("krew install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(root, "bin", Bin(runtime.GOOS)), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), p.Spec.Version) {
		t.Fatalf("the installed plugin's --version: %v\n%s", err, out)
	}

	// And krew refuses an archive whose sum is not the manifest's.
	bad := filepath.Join(t.TempDir(), filepath.Base(archive))
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := exec.Command(krew, "install", "--manifest="+filepath.Join(dir, ManifestFile), "--archive="+bad)
	refused.Env = append(os.Environ(), "KREW_ROOT="+t.TempDir(), "KREW_NO_UPGRADE_CHECK=1")
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "checksum does not match") {
		t.Fatalf("krew installed an archive with another sum: %v\n%s", err, out)
	}
}
