package cli

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// An approval that meets a conflict (the request changed between the read
// and the patch) is tried again only on the same plan: a plan made again
// meanwhile was never shown, and is not approved.
func TestApproveAfterAConflict(t *testing.T) {
	for _, c := range []struct {
		name      string
		replan    bool
		wantCode  exit.Code
		wantValue string
	}{
		{"the same plan", false, exit.OK, "aaaaaaaaaaaaaaaa"},
		{"planned again meanwhile", true, exit.WrongState, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r"}}
			rr.Spec.Approval = v1alpha1.ApprovalManual
			rr.Status.Phase = v1alpha1.PhaseAwaitingApproval
			rr.Status.Plan = &v1alpha1.PlanSummary{Digest: "aaaaaaaaaaaaaaaa", JobName: "r-plan"}
			conflicted := false
			base := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(rr).WithStatusSubresource(rr).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if !conflicted {
						conflicted = true
						if c.replan {
							var cur v1alpha1.ReplayRequest
							if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), &cur); err != nil {
								return err
							}
							cur.Status.Plan.Digest = "bbbbbbbbbbbbbbbb"
							if err := cl.Status().Update(ctx, &cur); err != nil {
								return err
							}
						}
						return apierrors.NewConflict(schema.GroupResource{Group: "kafkareplay.dev", Resource: "replayrequests"}, obj.GetName(), nil)
					}
					return cl.Patch(ctx, obj, patch, opts...)
				}}).Build()
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			a := &app{streams: streams, c: base, ns: "shop"}
			err := a.decide(context.Background(), "r", "approve", func(rr *v1alpha1.ReplayRequest) (string, string, error) {
				return v1alpha1.AnnotationApprove, rr.Status.Plan.Digest, nil
			}, waitFlags{})
			if got := exit.CodeOf(err); got != c.wantCode {
				t.Fatalf("exit %d (%v), want %d; out %s err %s", got, err, c.wantCode, out, errOut)
			}
			if c.replan && !strings.Contains(err.Error(), "changed from aaaaaaaaaaaaaaaa to bbbbbbbbbbbbbbbb") {
				t.Errorf("error %v", err)
			}
			var cur v1alpha1.ReplayRequest
			if err := base.Get(context.Background(), client.ObjectKeyFromObject(rr), &cur); err != nil {
				t.Fatal(err)
			}
			if got := cur.Annotations[v1alpha1.AnnotationApprove]; got != c.wantValue {
				t.Errorf("approve annotation %q, want %q", got, c.wantValue)
			}
		})
	}
}

// A digest that is not the plan's is not said to be an old plan's: a
// mistyped one reads the same (issue 32, friction 7).
func TestDigestMismatch(t *testing.T) {
	const plan = "41fc00aa11bb22cc"
	err := digestMismatch("shop", "orders-rewind", plan, "0123456789abcdef")
	msg := err.Error()
	for _, want := range []string{"--digest 0123456789abcdef is not the digest of orders-rewind's plan, which is " + plan, "check the digest you copied", "kubectl replay plan orders-rewind -n shop", "nothing was approved"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "is now") || exit.CodeOf(err) != exit.WrongState {
		t.Errorf("%q (code %v) reads as if the plan had changed", msg, exit.CodeOf(err))
	}
	short := digestMismatch("shop", "orders-rewind", plan, "41fc").Error()
	if !strings.Contains(short, `--digest "41fc" is not a plan digest (16 lowercase hex digits`) {
		t.Errorf("a short digest: %q", short)
	}

	// A request over several groups: one digest over every group's plan,
	// sha256:<64 hex>. A group's digest given for it, or its hex without
	// the prefix, is not its form.
	const parent = "sha256:9f2c0000000000000000000000000000000000000000000000000000000000aa"
	for _, given := range []string{plan, parent[len("sha256:"):], "sha256:9f2c", "sha256:" + strings.ToUpper(parent[7:])} {
		if msg := digestMismatch("shop", "incident-42", parent, given).Error(); !strings.Contains(msg, "is not a plan digest (sha256: and 64 lowercase hex digits") {
			t.Errorf("%q for a parent: %q", given, msg)
		}
	}
	other := "sha256:" + strings.Repeat("0", 64)
	if msg := digestMismatch("shop", "incident-42", parent, other).Error(); !strings.Contains(msg, "--digest "+other+" is not the digest of incident-42's plan, which is "+parent) {
		t.Errorf("another parent digest: %q", msg)
	}
}
