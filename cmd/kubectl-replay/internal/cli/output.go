package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// outputFlag adds -o to a command; allowed are json and yaml (and the
// empty default, the human form).
func outputFlag(cmd *cobra.Command, p *string, what string) {
	cmd.Flags().StringVarP(p, "output", "o", "", "print "+what+" as json or yaml")
}

func checkOutput(o string) error {
	switch o {
	case "", "json", "yaml":
		return nil
	}
	return exit.Errorf(exit.Usage, "--output: %q is not json or yaml", o)
}

// printAs writes v as JSON or YAML.
func printAs(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// printManifest writes a request to create, without its (empty) status
// and server-set metadata, as one would keep it in Git.
func printManifest(w io.Writer, format string, rr *v1alpha1.ReplayRequest) error {
	b, err := json.Marshal(rr)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return printAs(w, format, m)
}
