package launcher

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A consumer that is not there is named with the namespace searched, and
// fails the request (issue 32, friction 7); any other error is retried.
func TestUnitConsumerError(t *testing.T) {
	err := consumerError("Deployment billing-consumer", "shop", apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "billing-consumer"))
	want := "consumers: Deployment billing-consumer not found in namespace shop: spec.consumers names workloads in the request's own namespace; check the kind and name (kubectl -n shop get deployments)"
	if err.Error() != want || !permanent(err) {
		t.Errorf("not found: %q (permanent %v), want %q", err, permanent(err), want)
	}
	outage := consumerError("StatefulSet archiver", "shop", apierrors.NewServiceUnavailable("etcd"))
	if permanent(outage) || !strings.Contains(outage.Error(), "consumers: StatefulSet archiver: ") {
		t.Errorf("an outage: %q (permanent %v)", outage, permanent(outage))
	}
}
