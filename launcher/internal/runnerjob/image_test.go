package runnerjob

import (
	"strings"
	"testing"
)

func TestUnitCheckImage(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const def = "registry.example.com/kafka-replay-runner:1.0"
	tests := []struct {
		name          string
		image         string
		allowed       []string
		requireDigest bool
		want          string // the normalised image; empty: refused
	}{
		// The cases: a raw prefix admitted these.
		{"a longer repository", "registry.example.com/kafka-replay-runner-evil:1", []string{"registry.example.com/kafka-replay-runner"}, false, ""},
		{"a longer registry", "registry.example.com.attacker.io/x", []string{"registry.example.com"}, false, ""},
		{"the repository", "registry.example.com/kafka-replay-runner:2", []string{"registry.example.com/kafka-replay-runner"}, false, "registry.example.com/kafka-replay-runner:2"},
		{"the repository by digest", "registry.example.com/kafka-replay-runner" + digest, []string{"registry.example.com/kafka-replay-runner"}, false, "registry.example.com/kafka-replay-runner" + digest},
		{"a repository below it", "registry.example.com/kafka-replay-runner/x:1", []string{"registry.example.com/kafka-replay-runner"}, false, ""},
		{"the registry", "registry.example.com/team/x:1", []string{"registry.example.com"}, false, "registry.example.com/team/x:1"},
		{"the registry on another port", "registry.example.com:5000/x:1", []string{"registry.example.com"}, false, ""},
		{"a registry with a port", "registry.example.com:5000/x:1", []string{"registry.example.com:5000"}, false, "registry.example.com:5000/x:1"},
		{"under a path", "mirror.example.com/kafka-replay/runner:1", []string{"mirror.example.com/kafka-replay/"}, false, "mirror.example.com/kafka-replay/runner:1"},
		{"beside the path", "mirror.example.com/kafka-replay-evil/runner:1", []string{"mirror.example.com/kafka-replay/"}, false, ""},
		{"the path itself is not under it", "mirror.example.com/kafka-replay:1", []string{"mirror.example.com/kafka-replay/"}, false, ""},
		{"the older prefix spelling of tags", "localhost/kafka-replay-runner:dev", []string{"localhost/kafka-replay-runner:"}, false, "localhost/kafka-replay-runner:dev"},
		{"a Docker Hub path", "team/runner:1", []string{"team/"}, false, "docker.io/team/runner:1"},
		{"a Docker Hub path is not the library image", "docker.io/library/team:1", []string{"team/"}, false, ""},
		{"untagged is the repository's latest", "registry.example.com/kafka-replay-runner", []string{"registry.example.com/kafka-replay-runner"}, false, "registry.example.com/kafka-replay-runner"},
		{"docker hub, normalised", "busybox:1", []string{"docker.io/library/busybox"}, false, "docker.io/library/busybox:1"},
		{"docker hub is a registry of its own", "busybox:1", []string{"registry.example.com"}, false, ""},
		{"anything", "quay.io/x/y:1", []string{"*"}, false, "quay.io/x/y:1"},
		{"default: the runner image's repository", "registry.example.com/kafka-replay-runner:2", nil, false, "registry.example.com/kafka-replay-runner:2"},
		{"default: not another one", "registry.example.com/kafka-replay-runner-evil:2", nil, false, ""},
		{"not a reference", "Registry.example.com/UPPER:1", []string{"*"}, false, ""},
		{"a digest required, a tag given", "registry.example.com/kafka-replay-runner:2", nil, true, ""},
		{"a digest required and given", "registry.example.com/kafka-replay-runner:2" + digest, nil, true, "registry.example.com/kafka-replay-runner:2" + digest},
		{"a digest required, even with *", "quay.io/x/y:1", []string{"*"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckImage(tt.image, tt.allowed, def, tt.requireDigest)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("%q admitted by %q as %q", tt.image, tt.allowed, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CheckImage(%q, %q) = %q, %v; want %q", tt.image, tt.allowed, got, err, tt.want)
			}
		})
	}
}

func TestUnitParseImageRules(t *testing.T) {
	for _, bad := range []string{"", "registry.example.com/runner:1.0", "registry.example.com/runner@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "host:port:x"} {
		if err := ParseImageRules([]string{bad}); err == nil {
			t.Errorf("entry %q accepted", bad)
		}
	}
	if err := ParseImageRules([]string{"*", "registry.example.com", "localhost:5000", "ghcr.io/kafka-replay/runner", "mirror.example.com/kafka-replay/", "localhost/kafka-replay-runner:"}); err != nil {
		t.Error(err)
	}
	if err := ParseImageRules([]string{"registry.example.com/runner:1.0"}); err == nil || !strings.Contains(err.Error(), "repository only") {
		t.Errorf("a tagged entry: %v", err)
	}
}
