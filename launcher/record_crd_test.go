package launcher_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The ReplayRecord CRD is what `kubectl explain replayrecord` and `kubectl get
// rrec` read: every field documented, its printer columns, short name and
// category.
func TestRecordCRDIsDocumentedAndDiscoverable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "charts", "kafka-replay", "crds", "kafkareplay.dev_replayrecords.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Names struct {
				Kind       string   `json:"kind"`
				ShortNames []string `json:"shortNames"`
				Categories []string `json:"categories"`
			} `json:"names"`
			Scope    string `json:"scope"`
			Versions []struct {
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
	n := crd.Spec.Names
	if n.Kind != "ReplayRecord" || !slices.Equal(n.ShortNames, []string{"rrec"}) || !slices.Equal(n.Categories, []string{"kafka"}) || crd.Spec.Scope != "Namespaced" {
		t.Fatalf("names = %+v, scope %s", n, crd.Spec.Scope)
	}
	v := crd.Spec.Versions[0]
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c["name"].(string))
	}
	if !slices.Equal(cols, []string{"Group", "Reason", "Changed", "DryRun", "Partitions", "Reconsumed", "Skipped", "Attempts", "Complete", "Age"}) {
		t.Fatalf("printer columns = %v", cols)
	}
	var missing []string
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if d, _ := s["description"].(string); strings.TrimSpace(d) == "" {
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
	for name, p := range v.Schema.OpenAPIV3Schema["properties"].(map[string]any) {
		if name != "apiVersion" && name != "kind" && name != "metadata" {
			walk(name, p.(map[string]any))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("fields without a description: %v", missing)
	}
}
