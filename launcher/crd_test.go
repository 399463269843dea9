package launcher_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The generated CRD is what `kubectl explain` and `kubectl get` read: every
// field documented, the printer columns, short name and category the issue
// asks for, and the status subresource.
func TestCRDIsDocumentedAndDiscoverable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "charts", "kafka-replay", "crds", "kafkareplay.dev_replayrequests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Names struct {
				ShortNames []string `json:"shortNames"`
				Categories []string `json:"categories"`
			} `json:"names"`
			Scope    string `json:"scope"`
			Versions []struct {
				Name                     string           `json:"name"`
				Subresources             map[string]any   `json:"subresources"`
				AdditionalPrinterColumns []map[string]any `json:"additionalPrinterColumns"`
				Schema                   struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(crd.Spec.Names.ShortNames, []string{"rr"}) || !slices.Equal(crd.Spec.Names.Categories, []string{"kafka"}) || crd.Spec.Scope != "Namespaced" {
		t.Fatalf("names = %+v, scope %s", crd.Spec.Names, crd.Spec.Scope)
	}
	v := crd.Spec.Versions[0]
	if _, ok := v.Subresources["status"]; !ok || v.Name != "v1alpha1" {
		t.Fatalf("version %s, subresources %v", v.Name, v.Subresources)
	}
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c["name"].(string))
	}
	if !slices.Equal(cols, []string{"Group", "Target", "Phase", "Reason", "Reconsumed", "Skipped", "Age", "Plan", "ApprovedBy", "Moved", "ConsumerRef"}) {
		t.Fatalf("printer columns = %v", cols)
	}
	// The default view keeps its seven columns (the docs show them, and
	// the e2e compares them with kubectl's); the rest are -o wide's.
	for i, c := range v.AdditionalPrinterColumns {
		if p, _ := c["priority"].(float64); (i < 7) != (p == 0) {
			t.Errorf("printer column %s: priority %v; only the first seven are shown without -o wide", c["name"], c["priority"])
		}
	}

	// Every property under spec and status has a description.
	var missing []string
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if d, _ := s["description"].(string); strings.TrimSpace(d) == "" && path != "" {
			missing = append(missing, path)
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(path+"."+name, p.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			if _, obj := items["properties"]; obj {
				walk(path+"[]", items)
			}
		}
	}
	root := v.Schema.OpenAPIV3Schema["properties"].(map[string]any)
	walk("spec", root["spec"].(map[string]any))
	walk("status", root["status"].(map[string]any))
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("fields without a description (kubectl explain shows nothing): %v", missing)
	}
}
