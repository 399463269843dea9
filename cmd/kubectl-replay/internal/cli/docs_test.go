package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Every verb is in docs/kubectl-replay.md, has examples in its --help, and
// every flag of create is in the docs' flag table.
func TestDocsNameEveryVerbAndFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "kubectl-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	a := &app{flags: genericclioptions.NewConfigFlags(true), streams: genericiooptions.NewTestIOStreamsDiscard()}
	root := a.rootCommand()
	for _, cmd := range root.Commands() {
		if cmd.Name() == "help" || cmd.Name() == "completion" {
			continue
		}
		if !strings.Contains(doc, "`"+cmd.Name()+" ") {
			t.Errorf("docs/kubectl-replay.md does not document %s", cmd.Name())
		}
		if cmd.Example == "" || cmd.Long == "" {
			t.Errorf("%s --help has no examples or no long description", cmd.Name())
		}
		if cmd.Name() != "create" {
			continue
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Name {
			case "output", "wait", "timeout", "help":
				return // the verbs' common flags, documented above the table
			}
			if f.Hidden {
				return
			}
			if !strings.Contains(doc, "`--"+f.Name) {
				t.Errorf("docs/kubectl-replay.md's create table has no --%s", f.Name)
			}
		})
	}
}
