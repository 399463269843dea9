package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// The docs run as written: the shell blocks of the README's Kubernetes
// section and of docs/usage.md's ReplayRequest walk-through run, in order,
// on the real cluster, and the documented `kubectl get rr` columns are the
// ones kubectl prints.
//
// Every ```sh block of those sections carries a marker on the line above it:
//
//	<!-- e2e: run -->                  run here, after docSubstitutions
//	<!-- e2e: not run: <why> -->       cannot run here, and why (Argo's CLI, ...)
//
// A block without one fails the test: nothing is skipped silently.

// docSections are the parts of the docs whose commands run, each from its
// heading to the next heading of the same level.
var docSections = []struct{ file, heading string }{
	{"README.md", "## On Kubernetes: three ways to start a replay"},
	{"docs/usage.md", "## 1. A ReplayRequest"},
}

// docSubstitutions are the only changes made to a documented command: the
// docs' example host names become this cluster's Kafka. Longer first.
func docSubstitutions(bootstrap string) []string {
	return []string{
		"kafka-0.kafka:9092,kafka-1.kafka:9092", bootstrap,
		"kafka-0.kafka:9092", bootstrap,
	}
}

type docBlock struct {
	file, first string // where, and its first line, for messages
	run         bool
	text        string
}

var docMarker = regexp.MustCompile(`^<!-- e2e: (run|not run: .+) -->$`)

// docBlocks returns the sh blocks of one section, in order, with their
// markers; an error names any block without one.
func docBlocks(root, file, heading string) ([]docBlock, error) {
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	text := string(b)
	start := strings.Index(text, "\n"+heading+"\n")
	if start < 0 {
		return nil, fmt.Errorf("%s has no section %q", file, heading)
	}
	text = text[start+1:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if end := strings.Index(text[len(heading):], "\n"+level); end >= 0 {
		text = text[:len(heading)+end]
	}
	lines := strings.Split(text, "\n")
	var out []docBlock
	var bad []string
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		indent, _, _ := strings.Cut(lines[i], "```") // the fence's indentation, as in a list item
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		var body []string
		for _, l := range lines[i+1 : j] {
			body = append(body, strings.TrimPrefix(l, indent))
		}
		blk := docBlock{file: file, text: strings.Join(body, "\n") + "\n"}
		if len(body) > 0 {
			blk.first = body[0]
		}
		m := []string(nil)
		if i > 0 {
			m = docMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
		}
		if m == nil {
			bad = append(bad, fmt.Sprintf("%s: the block starting %q has no <!-- e2e: run --> or <!-- e2e: not run: why --> marker", file, blk.first))
		} else {
			blk.run = m[1] == "run"
			out = append(out, blk)
		}
		i = j
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}
	return out, nil
}

func TestDocsRunAsWritten(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, s := range docSections {
		b, err := docBlocks(root, s.file, s.heading)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// The walk-through's second topic.
	if err := f.kafka.Seed(ctx, "payments", 3, 50, base, time.Second); err != nil {
		t.Fatal(err)
	}
	sub := strings.NewReplacer(docSubstitutions(f.kafka.Bootstrap())...)
	dir := t.TempDir() // the walk-through writes its request file in the working directory
	for _, b := range blocks {
		if !b.run {
			t.Logf("%s: not run here, as marked: %s", b.file, b.first)
			continue
		}
		script := sub.Replace(b.text)
		cmd := f.c.Command(ctx, "sh", "-ec", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("%s: ran %q:\n%s", b.file, b.first, out)
		if err != nil {
			t.Fatalf("%s: the documented commands starting %q failed: %v\n%s", b.file, b.first, err, out)
		}
	}

	// The documented kubectl get rr columns are kubectl's.
	doc, err := os.ReadFile(filepath.Join(root, "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "NAME ") && strings.Contains(l, " TARGET ") && strings.Contains(l, " PHASE ") {
			want = strings.Join(strings.Fields(l), " ")
			break
		}
	}
	got, err := f.c.Kubectl(ctx, "-n", "shop", "get", "rr", "orders-rewind-dry")
	if err != nil {
		t.Fatal(err)
	}
	if header := strings.Join(strings.Fields(strings.SplitN(got, "\n", 2)[0]), " "); want == "" || header != want {
		t.Fatalf("docs/usage.md documents the columns %q; kubectl get rr prints %q", want, header)
	}
}
