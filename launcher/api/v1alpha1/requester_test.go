package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRequester(t *testing.T) {
	for _, tt := range []struct {
		annotations map[string]string
		want        string
	}{
		{nil, RequesterUnknown},
		{map[string]string{AnnotationRequestedBy: ""}, RequesterUnknown},
		{map[string]string{AnnotationRequestedByGroups: "team"}, RequesterUnknown},
		{map[string]string{AnnotationRequestedBy: "alice"}, "alice"},
	} {
		rr := &ReplayRequest{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
		if got := rr.Requester(); got != tt.want {
			t.Errorf("Requester() with %v = %q, want %q", tt.annotations, got, tt.want)
		}
	}
}
