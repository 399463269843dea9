package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// The krew manifest as krew's index reads it (sigs.k8s.io/krew pkg/index,
// apiVersion krew.googlecontainertools.github.com/v1alpha2). Decoding is strict, so a
// field krew does not know is an error too.
type Plugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   PluginMetadata `json:"metadata"`
	Spec       PluginSpec     `json:"spec"`
}

// PluginMetadata is the manifest's metadata: krew reads only the name.
type PluginMetadata struct {
	Name string `json:"name"`
}

// PluginSpec is what krew installs.
type PluginSpec struct {
	Version          string     `json:"version"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage,omitempty"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one archive and how krew picks and installs it.
type Platform struct {
	Selector *Selector `json:"selector"`
	URI      string    `json:"uri"`
	SHA256   string    `json:"sha256"`
	Bin      string    `json:"bin"`
	Files    []FileOp  `json:"files"`
}

// Selector is a label selector over the labels os and arch (Go's GOOS and
// GOARCH of the machine krew runs on).
type Selector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []SelectorExpr    `json:"matchExpressions,omitempty"`
}

// SelectorExpr is a matchExpressions entry.
type SelectorExpr struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// FileOp copies files from the unpacked archive into the plugin's directory.
type FileOp struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// KrewAPIVersion and KrewKind are the only ones krew accepts.
const (
	KrewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	KrewKind       = "Plugin"
	// PluginName is the plugin's krew name: kubectl replay.
	PluginName = "replay"
)

var (
	safeName = regexp.MustCompile(`^[\w-]+$`)
	sha256Re = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// semverRe is semantic versioning with the v prefix krew requires.
	// What Render lets into the YAML: nothing that could change its shape.
	plainWord = regexp.MustCompile(`^[a-z0-9]+$`)
	plainFile = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	plainURI  = regexp.MustCompile(`^https://[A-Za-z0-9._~:/?=+-]+$`)
	semverRe  = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// ParseManifest decodes a manifest strictly.
func ParseManifest(b []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("krew manifest: %w", err)
	}
	return &p, nil
}

// Validate applies krew's own checks of a plugin manifest (those of its
// index validation, which `kubectl krew install --manifest` and the
// krew-index CI run), and the ones that make the manifest installable on
// every platform it names: one archive per os/arch, a bin that the files
// copy, an https URI. Each error names the field.
func Validate(p *Plugin, name string) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.APIVersion != KrewAPIVersion {
		add("apiVersion is %q, krew only reads %q", p.APIVersion, KrewAPIVersion)
	}
	if p.Kind != KrewKind {
		add("kind is %q, must be %q", p.Kind, KrewKind)
	}
	if !safeName.MatchString(name) || isWindowsReserved(name) {
		add("plugin name %q is not allowed: letters, digits, _ and - only", name)
	}
	if p.Metadata.Name != name {
		add("metadata.name is %q, must be %q", p.Metadata.Name, name)
	}
	if p.Spec.ShortDescription == "" {
		add("spec.shortDescription is empty")
	}
	if !semverRe.MatchString(p.Spec.Version) {
		add("spec.version %q is not a semantic version with a leading v (v1.2.3)", p.Spec.Version)
	}
	if len(p.Spec.Platforms) == 0 {
		add("spec.platforms is empty")
	}
	seen := map[string]int{}
	for i, pl := range p.Spec.Platforms {
		field := fmt.Sprintf("spec.platforms[%d]", i)
		if err := validatePlatform(pl); err != nil {
			add("%s: %w", field, err)
			continue
		}
		key := pl.Selector.MatchLabels["os"] + "/" + pl.Selector.MatchLabels["arch"]
		if j, ok := seen[key]; ok {
			add("%s: selector %s is also spec.platforms[%d]'s: krew would pick one at random", field, key, j)
		}
		seen[key] = i
	}
	return errors.Join(errs...)
}

func validatePlatform(pl Platform) error {
	var errs []error
	if pl.URI == "" {
		errs = append(errs, errors.New("uri is empty"))
	} else if u, err := url.Parse(pl.URI); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Errorf("uri %q is not an https URL", pl.URI))
	}
	if !sha256Re.MatchString(pl.SHA256) {
		errs = append(errs, fmt.Errorf("sha256 %q is not 64 lowercase hex digits", pl.SHA256))
	}
	if pl.Bin == "" {
		errs = append(errs, errors.New("bin is empty"))
	}
	if len(pl.Files) == 0 {
		errs = append(errs, errors.New("files is empty: krew installs nothing"))
	}
	copied := false
	for j, f := range pl.Files {
		if f.From == "" || f.To == "" {
			errs = append(errs, fmt.Errorf("files[%d]: from and to must be set", j))
		}
		if f.From == pl.Bin || (f.To == "." && strings.HasSuffix(f.From, "/"+pl.Bin)) {
			copied = true
		}
	}
	if pl.Bin != "" && !copied {
		errs = append(errs, fmt.Errorf("bin %q is not among the files copied", pl.Bin))
	}
	switch sel := pl.Selector; {
	case sel == nil:
		errs = append(errs, errors.New("selector is not set"))
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
		errs = append(errs, errors.New("selector is empty"))
	case len(sel.MatchExpressions) > 0:
		errs = append(errs, errors.New("selector: matchExpressions are valid krew, but this manifest is rendered with matchLabels os and arch only"))
	default:
		for k := range sel.MatchLabels {
			if k != "os" && k != "arch" {
				errs = append(errs, fmt.Errorf("selector key %q: krew selects on os and arch only", k))
			}
		}
		if sel.MatchLabels["os"] == "" || sel.MatchLabels["arch"] == "" {
			errs = append(errs, errors.New("selector must set both os and arch"))
		}
	}
	return errors.Join(errs...)
}

func isWindowsReserved(name string) bool {
	switch strings.ToUpper(name) {
	case "CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
		return true
	}
	return false
}

// RenderData is what the template is rendered with.
type RenderData struct {
	Version   string
	Platforms []RenderPlatform
}

// RenderPlatform is one archive in the manifest.
type RenderPlatform struct {
	OS, Arch, URI, SHA256, Bin string
}

// Render fills the manifest template. Every value is checked first, so that
// nothing reaches the YAML that could change its structure.
func Render(tmpl string, d RenderData) ([]byte, error) {
	if !semverRe.MatchString(d.Version) {
		return nil, fmt.Errorf("--version %q is not a semantic version with a leading v (v1.2.3)", d.Version)
	}
	for _, p := range d.Platforms {
		if !plainWord.MatchString(p.OS) || !plainWord.MatchString(p.Arch) || !plainFile.MatchString(p.Bin) ||
			!sha256Re.MatchString(p.SHA256) || !plainURI.MatchString(p.URI) {
			return nil, fmt.Errorf("platform %s/%s: os, arch, bin, sha256 or uri (%q) is not plain", p.OS, p.Arch, p.URI)
		}
	}
	t, err := template.New("krew").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
