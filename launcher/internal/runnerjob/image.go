package runnerjob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Runner images are compared by what they name, never by spelling: an
// allow-list of raw prefixes admits registry.example.com/runner-evil under
// registry.example.com/runner, and registry.example.com.attacker.io/x under
// registry.example.com. References are parsed with
// github.com/distribution/reference, the grammar container runtimes and the
// Kubernetes ecosystem use, so that what is checked is what the kubelet
// pulls (a bare "runner" is docker.io/library/runner).

// imageRuleKind is what an allowed-images entry admits.
type imageRuleKind int

const (
	// ruleRepository admits one repository, with any tag or digest.
	ruleRepository imageRuleKind = iota
	// ruleRegistry admits every repository of one registry (host[:port]).
	ruleRegistry
	// ruleUnder admits every repository under a path (an entry ending in "/").
	ruleUnder
	// ruleAny admits any image ("*").
	ruleAny
)

// imageRule is one parsed entry of Options.AllowedRunnerImages.
type imageRule struct {
	kind   imageRuleKind
	domain string // the registry, as reference.Domain returns it
	path   string // the repository path, as reference.Path returns it
}

// parseImageRule reads an allowed-images entry:
//
//   - "*": any image;
//   - host[:port], a name without "/" that has a "." or ":" or is
//     localhost: any repository of that registry;
//   - host/path/: any repository under host/path;
//   - [host/]path: that repository, with any tag or digest; a trailing ":"
//     or "@" (the older prefix spelling of "its tags") is the same.
func parseImageRule(entry string) (imageRule, error) {
	e := strings.TrimSpace(entry)
	switch {
	case e == "*":
		return imageRule{kind: ruleAny}, nil
	case e == "":
		return imageRule{}, errors.New("empty entry")
	case !strings.Contains(e, "/") && (strings.ContainsAny(e, ".:") || e == "localhost"):
		// A registry alone: check it as the domain of a reference.
		named, err := reference.ParseNormalizedNamed(e + "/x")
		if err != nil || reference.Domain(named) != e {
			return imageRule{}, fmt.Errorf("%q is not a registry host[:port]", entry)
		}
		return imageRule{kind: ruleRegistry, domain: e}, nil
	}
	if strings.HasSuffix(e, "/") {
		// Parsed with a last component added: a single name such as
		// "team/" is a path on Docker Hub, not the library image "team".
		named, err := reference.ParseNormalizedNamed(e + "x")
		if err != nil || !reference.IsNameOnly(named) {
			return imageRule{}, fmt.Errorf("%q is not an image path", entry)
		}
		return imageRule{kind: ruleUnder, domain: reference.Domain(named), path: strings.TrimSuffix(reference.Path(named), "/x")}, nil
	}
	named, err := reference.ParseNormalizedNamed(strings.TrimRight(e, ":@"))
	if err != nil {
		return imageRule{}, fmt.Errorf("%q is not an image repository: %w", entry, err)
	}
	if !reference.IsNameOnly(named) {
		return imageRule{}, fmt.Errorf("%q names a tag or digest; give the repository only", entry)
	}
	return imageRule{kind: ruleRepository, domain: reference.Domain(named), path: reference.Path(named)}, nil
}

// admits reports whether the rule admits a parsed image.
func (r imageRule) admits(named reference.Named) bool {
	switch r.kind {
	case ruleAny:
		return true
	case ruleRegistry:
		return reference.Domain(named) == r.domain
	case ruleUnder:
		return reference.Domain(named) == r.domain && strings.HasPrefix(reference.Path(named), r.path+"/")
	}
	return reference.Domain(named) == r.domain && reference.Path(named) == r.path
}

// ParseImageRules parses every allowed-images entry, so that a bad entry is
// an error at startup rather than an image silently refused.
func ParseImageRules(entries []string) error {
	for _, e := range entries {
		if _, err := parseImageRule(e); err != nil {
			return err
		}
	}
	return nil
}

// CheckImage decides whether a request may run image. allowed are
// the entries of Defaults.AllowedRunnerImages; empty admits only the
// repository of defaultImage. requireDigest also demands a digest
// (@sha256:...), so that what runs cannot change under a tag. It returns
// the image in its full, normalised form (docker.io/library/runner:1.0),
// which is what the Job carries: the chart's admission policy checks that
// same string.
func CheckImage(image string, allowed []string, defaultImage string, requireDigest bool) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("%q is not an image reference: %w", image, err)
	}
	if _, digested := named.(reference.Digested); requireDigest && !digested {
		return "", fmt.Errorf("%q has no digest; the launcher requires images by digest (image@sha256:...)", image)
	}
	entries := allowed
	if len(entries) == 0 {
		def, err := reference.ParseNormalizedNamed(defaultImage)
		if err != nil {
			return "", fmt.Errorf("the launcher's runner image %q is not an image reference: %w", defaultImage, err)
		}
		entries = []string{reference.TrimNamed(def).String()}
	}
	for _, e := range entries {
		rule, err := parseImageRule(e)
		if err != nil {
			return "", err
		}
		if rule.admits(named) {
			return named.String(), nil
		}
	}
	return "", fmt.Errorf("%q is not an allowed runner image (allowed: %s)", image, strings.Join(entries, ", "))
}
