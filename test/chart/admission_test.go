package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher"
	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The requester annotations the chart's policies write are the launcher's
// (v1alpha1.AnnotationRequestedBy and ...Groups): the test reads them by
// those names.
const (
	annotationRequestedBy       = v1alpha1.AnnotationRequestedBy
	annotationRequestedByGroups = v1alpha1.AnnotationRequestedByGroups
)

// admissionRelease renders the chart's admission policies (and the
// launcher's ServiceAccount and RBAC) under fullname, scoped to the
// namespaces labelled scope=true, and applies them to envtest. mutating
// says whether the chart is told the API server serves
// MutatingAdmissionPolicy. The API server compiles every expression when
// a policy is created; what it cannot type-check without a controller
// manager (envtest has none) shows as a refusal of the admitted cases.
func admissionRelease(ctx context.Context, t *testing.T, admin client.Client, fullname, scope string, mutating bool) []*unstructured.Unstructured {
	t.Helper()
	values := writeValues(t, map[string]any{
		"fullnameOverride": fullname,
		"runner": map[string]any{
			"image":         map[string]any{"repository": "registry.example.com/kafka-replay-runner", "tag": "1.0"},
			"allowedImages": []string{"mirror.example.com/kafka-replay/"},
		},
		"admissionPolicies": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]string{scope: "true"}}},
	})
	args := []string{"--values", values}
	if mutating {
		args = append(args, "--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")
	}
	objs := render(t, args...)
	restrictedNamespace(ctx, t, admin, releaseNamespace)
	var policies []*unstructured.Unstructured
	for _, u := range objs {
		switch u.GetKind() {
		case "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy":
			policies = append(policies, u)
		case "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBinding",
			"ServiceAccount", "ClusterRole", "ClusterRoleBinding":
		default:
			continue
		}
		if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), fieldOwner, client.ForceOwnership); err != nil {
			t.Fatalf("%s/%s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() {
			_ = admin.Delete(context.Background(), u.DeepCopy())
		})
	}
	if len(policies) != map[bool]int{true: 4, false: 2}[mutating] {
		t.Fatalf("policies rendered: %v", kinds(policies))
	}
	return objs
}

// scopedNamespace creates a restricted namespace labelled for one release's
// request policies.
func scopedNamespace(ctx context.Context, t *testing.T, c client.Client, name, scope string) {
	t.Helper()
	restrictedNamespace(ctx, t, c, name)
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels[scope] = "true"
	if err := c.Update(ctx, &ns); err != nil {
		t.Fatal(err)
	}
}

// asUser is a client acting as a user of the given groups (impersonated by
// the envtest admin).
func asUser(t *testing.T, cfg *rest.Config, name string, groups ...string) client.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: groups}
	cl, _ := newClient(t, c)
	return cl
}

// grant gives a user rules in a namespace, through a Role and RoleBinding.
func grant(ctx context.Context, t *testing.T, admin client.Client, ns, name, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	for _, o := range []client.Object{role, rb} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// enforced waits until the API server enforces a freshly applied policy,
// by the effect a probe has: policies reach the admission chain through an
// informer, some time after they are created.
func enforced(t *testing.T, what string, probe func() error) {
	t.Helper()
	eventuallyDo(t, time.Minute, what, probe)
}

// TestAdmissionPolicies applies the chart's admission policies to envtest
// and acts as a user who may only create ReplayRequests, and as the
// launcher's ServiceAccount:
//
//   - naming a Secret the user may neither get nor use is refused; with
//     verb use on it, admitted; likewise a ServiceAccount;
//   - the requester annotations the user forges are overwritten with the
//     user's name and groups, and cannot be changed afterwards, not even by
//     an admin;
//   - the launcher's identity may create the Jobs launcher.BuildJob makes,
//     and is refused one with another image (also one whose name merely
//     starts with the allowed repository, or whose registry merely starts
//     with the allowed registry), a hostPath volume, a Secret in its
//     environment or without the security context.
func TestAdmissionPolicies(t *testing.T) {
	cfg := controlPlane(t)
	helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, _ := newClient(t, cfg)

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served, err := dc.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	mutating := false
	for _, r := range served.APIResources {
		mutating = mutating || r.Kind == "MutatingAdmissionPolicy"
	}
	if !mutating {
		t.Fatal("kube-apiserver v1.37 serves no admissionregistration.k8s.io/v1 MutatingAdmissionPolicy; the requester stamp cannot be tested")
	}

	const ns, scope = "kafka-replay-admission", "kafka-replay-admission-test"
	scopedNamespace(ctx, t, admin, ns, scope)
	objs := admissionRelease(ctx, t, admin, "adm", scope, true)

	const user, team = "alice", "team-orders"
	alice := asUser(t, cfg, user, team)
	grant(ctx, t, admin, ns, "create-requests", user, rbacv1.PolicyRule{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"create"},
	})

	// Wait for the policies to be enforced: the probe is a Secret alice
	// may not use.
	enforced(t, "the request policy", func() error {
		err := alice.Create(ctx, testutil.MakeRequest(ns, "probe").Secret("kafka-prod").Obj(), client.DryRunAll)
		if err == nil {
			return fmt.Errorf("a request naming a Secret alice may not use was admitted")
		}
		if !strings.Contains(err.Error(), "may neither get nor use Secret kafka-prod") {
			return err
		}
		return nil
	})

	t.Run("secretRef", func(t *testing.T) {
		err := alice.Create(ctx, testutil.MakeRequest(ns, "no-right").Secret("kafka-prod").Obj(), client.DryRunAll)
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Fatalf("a Secret alice may neither get nor use: %v", err)
		}
		if !strings.Contains(err.Error(), "verbs: [use]") {
			t.Errorf("the refusal does not say how to grant it: %v", err)
		}
		grant(ctx, t, admin, ns, "use-kafka-prod", user, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"kafka-prod"}, Verbs: []string{"use"},
		})
		eventuallyDo(t, time.Minute, "the use grant", func() error {
			return alice.Create(ctx, testutil.MakeRequest(ns, "use-right").Secret("kafka-prod").Obj(), client.DryRunAll)
		})
		// Use of one Secret is not use of another.
		if err := alice.Create(ctx, testutil.MakeRequest(ns, "other").Secret("kafka-admin").Obj(), client.DryRunAll); err == nil {
			t.Error("use of kafka-prod admitted a request naming kafka-admin")
		}
	})

	t.Run("consumerRef", func(t *testing.T) {
		viaRef := func(name string, kind v1alpha1.KnativeKind) *v1alpha1.ReplayRequest {
			rr := testutil.MakeRequest(ns, name).Obj()
			rr.Spec.Kafka, rr.Spec.Group = v1alpha1.KafkaConnection{}, ""
			rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: kind, Name: "orders"}
			if kind == v1alpha1.ConsumerRefKafkaConnector {
				rr.Spec.Kafka.ClusterRef = &v1alpha1.StrimziClusterRef{Name: "sinks", Listener: "tls"}
			}
			return rr
		}
		for kind, want := range map[v1alpha1.KnativeKind]string{
			v1alpha1.KnativeTrigger:            "may not get Trigger orders",
			v1alpha1.KnativeKafkaSource:        "may not get KafkaSource orders",
			v1alpha1.KnativeSubscription:       "may not get Subscription orders",
			v1alpha1.ConsumerRefKafkaConnector: "may not get KafkaConnector orders",
		} {
			if err := alice.Create(ctx, viaRef("ref-"+strings.ToLower(string(kind)), kind), client.DryRunAll); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("a %s alice may not get: %v", kind, err)
			}
		}
		grant(ctx, t, admin, ns, "get-orders-trigger", user, rbacv1.PolicyRule{
			APIGroups: []string{"eventing.knative.dev"}, Resources: []string{"triggers"}, ResourceNames: []string{"orders"}, Verbs: []string{"get"},
		})
		eventuallyDo(t, time.Minute, "the Trigger get grant", func() error {
			return alice.Create(ctx, viaRef("ref-trigger", v1alpha1.KnativeTrigger), client.DryRunAll)
		})
		// get on a Trigger is not get on a KafkaSource of the same name.
		if err := alice.Create(ctx, viaRef("ref-source", v1alpha1.KnativeKafkaSource), client.DryRunAll); err == nil {
			t.Error("get on Trigger orders admitted a request naming KafkaSource orders")
		}
		// Nor on a KafkaConnector of that name (whose Kafka alice may get).
		grant(ctx, t, admin, ns, "get-sinks-kafka", user, rbacv1.PolicyRule{
			APIGroups: []string{"kafka.strimzi.io"}, Resources: []string{"kafkas"}, ResourceNames: []string{"sinks"}, Verbs: []string{"get"},
		})
		eventuallyDo(t, time.Minute, "the Kafka get grant", func() error {
			err := alice.Create(ctx, viaRef("ref-connector", v1alpha1.ConsumerRefKafkaConnector), client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), "may not get KafkaConnector orders") || strings.Contains(err.Error(), "may not get Kafka sinks") {
				return fmt.Errorf("want only the KafkaConnector refused, got %w", err)
			}
			return nil
		})
		grant(ctx, t, admin, ns, "get-orders-connector", user, rbacv1.PolicyRule{
			APIGroups: []string{"kafka.strimzi.io"}, Resources: []string{"kafkaconnectors"}, ResourceNames: []string{"orders"}, Verbs: []string{"get"},
		})
		eventuallyDo(t, time.Minute, "the KafkaConnector get grant", func() error {
			return alice.Create(ctx, viaRef("ref-connector", v1alpha1.ConsumerRefKafkaConnector), client.DryRunAll)
		})
	})

	t.Run("clusterRef", func(t *testing.T) {
		viaCluster := func(name, user string) *v1alpha1.ReplayRequest {
			rr := testutil.MakeRequest(ns, name).Obj()
			rr.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "prod", Listener: "tls", User: user}}
			return rr
		}
		if err := alice.Create(ctx, viaCluster("cluster-no-right", ""), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.kafka.clusterRef.name: alice may not get Kafka prod") {
			t.Fatalf("a Kafka alice may not get: %v", err)
		}
		grant(ctx, t, admin, ns, "get-prod-kafka", user, rbacv1.PolicyRule{
			APIGroups: []string{"kafka.strimzi.io"}, Resources: []string{"kafkas"}, ResourceNames: []string{"prod"}, Verbs: []string{"get"},
		})
		eventuallyDo(t, time.Minute, "the Kafka get grant", func() error {
			return alice.Create(ctx, viaCluster("cluster-right", ""), client.DryRunAll)
		})
		// get on the Kafka is not get on a KafkaUser of it.
		if err := alice.Create(ctx, viaCluster("cluster-user", "orders"), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.kafka.clusterRef.user: alice may not get KafkaUser orders") {
			t.Errorf("a KafkaUser alice may not get: %v", err)
		}
		// Nor on the Kafka of that name in another namespace
		// (clusterRef.namespace), which is checked there.
		elsewhere := func(name string) *v1alpha1.ReplayRequest {
			rr := viaCluster(name, "")
			rr.Spec.Kafka.ClusterRef.Namespace = ns + "-kafka"
			return rr
		}
		if err := alice.Create(ctx, elsewhere("cluster-elsewhere"), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.kafka.clusterRef.name: alice may not get Kafka prod in namespace "+ns+"-kafka") {
			t.Fatalf("a Kafka of another namespace alice may not get: %v", err)
		}
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-kafka"}}); err != nil {
			t.Fatal(err)
		}
		grant(ctx, t, admin, ns+"-kafka", "get-prod-kafka", user, rbacv1.PolicyRule{
			APIGroups: []string{"kafka.strimzi.io"}, Resources: []string{"kafkas"}, ResourceNames: []string{"prod"}, Verbs: []string{"get"},
		})
		eventuallyDo(t, time.Minute, "the Kafka get grant in its namespace", func() error {
			return alice.Create(ctx, elsewhere("cluster-elsewhere"), client.DryRunAll)
		})
	})

	t.Run("serviceAccountName", func(t *testing.T) {
		rr := testutil.MakeRequest(ns, "sa").Runner(v1alpha1.RunnerOverrides{ServiceAccountName: "kafka-admin"}).Obj()
		if err := alice.Create(ctx, rr.DeepCopy(), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "may not use ServiceAccount kafka-admin") {
			t.Fatalf("a ServiceAccount alice may not use: %v", err)
		}
		grant(ctx, t, admin, ns, "use-kafka-admin-sa", user, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"kafka-admin"}, Verbs: []string{"use"},
		})
		eventuallyDo(t, time.Minute, "the ServiceAccount use grant", func() error {
			return alice.Create(ctx, rr.DeepCopy(), client.DryRunAll)
		})
	})

	t.Run("requester", func(t *testing.T) {
		forged := testutil.MakeRequest(ns, "forged").Obj()
		forged.Annotations = map[string]string{annotationRequestedBy: "admin", annotationRequestedByGroups: "system:masters", "note": "kept"}
		if err := alice.Create(ctx, forged, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		a := forged.Annotations
		if got := forged.Requester(); got != user {
			t.Errorf("the launcher reads the requester as %q, want %q", got, user)
		}
		if a[annotationRequestedBy] != user {
			t.Errorf("requested-by = %q, want %q", a[annotationRequestedBy], user)
		}
		if groups := strings.Split(a[annotationRequestedByGroups], ","); !slices.Contains(groups, team) || slices.Contains(groups, "system:masters") {
			t.Errorf("requested-by-groups = %q, want alice's groups (%s, ...)", a[annotationRequestedByGroups], team)
		}
		if a["note"] != "kept" {
			t.Errorf("other annotations were not kept: %v", a)
		}

		// Stored, the stamp never changes, whoever asks.
		stored := testutil.MakeRequest(ns, "stored").Obj()
		if err := alice.Create(ctx, stored); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = admin.Delete(context.Background(), stored) }()
		for _, change := range []map[string]any{
			{annotationRequestedBy: "bob"},
			{annotationRequestedByGroups: "system:masters"},
			{annotationRequestedBy: nil},
		} {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": change}})
			err := admin.Patch(ctx, stored.DeepCopy(), client.RawPatch("application/merge-patch+json", patch))
			if err == nil || !strings.Contains(err.Error(), "cannot be changed") {
				t.Errorf("an admin changing the requester (%v): %v", change, err)
			}
		}
		// Other metadata still can change (the launcher's finalizer).
		patch := []byte(`{"metadata":{"labels":{"team":"orders"}}}`)
		if err := admin.Patch(ctx, stored.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Errorf("a label change was refused: %v", err)
		}
	})

	// Issue 27, case 5: the launcher's finalizer is what restores the
	// consumers a request paused. While status records one paused and not
	// restored, nobody but the launcher removes it: not a tenant who may
	// edit requests, not an admin (Argo CD's Replace=true is such an
	// update); once they are restored, anyone may.
	t.Run("finalizer", func(t *testing.T) {
		var launcherSA string
		for _, u := range byKind(objs, "ServiceAccount") {
			if strings.HasSuffix(u.GetName(), "-launcher") {
				launcherSA = u.GetName()
			}
		}
		launcherClient := asUser(t, cfg, "system:serviceaccount:"+releaseNamespace+":"+launcherSA, "system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace)
		grant(ctx, t, admin, ns, "edit-requests", user, rbacv1.PolicyRule{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"get", "update", "patch"},
		})
		state := func(rr *v1alpha1.ReplayRequest, st v1alpha1.ConsumerState) {
			t.Helper()
			rr.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "orders-consumer", Method: v1alpha1.PauseScale, Replicas: ptr.To[int32](2), State: st}}
			if err := admin.Status().Update(ctx, rr); err != nil {
				t.Fatal(err)
			}
		}
		strip := func(c client.Client, rr *v1alpha1.ReplayRequest) error {
			return c.Patch(ctx, rr.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
		}
		paused := func(name string, st v1alpha1.ConsumerState) *v1alpha1.ReplayRequest {
			rr := testutil.MakeRequest(ns, name).Obj()
			rr.Finalizers = []string{launcher.Finalizer}
			if err := admin.Create(ctx, rr); err != nil {
				t.Fatal(err)
			}
			state(rr, st)
			return rr
		}
		for _, st := range []v1alpha1.ConsumerState{v1alpha1.ConsumerPaused, v1alpha1.ConsumerRecorded} {
			rr := paused("paused-"+strings.ToLower(string(st)), st)
			for who, c := range map[string]client.Client{user: alice, "an admin": admin} {
				err := strip(c, rr)
				if err == nil || !strings.Contains(err.Error(), "may not remove "+launcher.Finalizer) {
					t.Fatalf("%s stripped the finalizer of a request whose consumers are %s: %v", who, st, err)
				}
			}
			// A replace without it (Argo CD's Replace=true) is refused too.
			var cur v1alpha1.ReplayRequest
			if err := admin.Get(ctx, client.ObjectKeyFromObject(rr), &cur); err != nil {
				t.Fatal(err)
			}
			cur.Finalizers = nil
			if err := alice.Update(ctx, &cur); err == nil {
				t.Fatalf("a replace without the finalizer was admitted while the consumers are %s", st)
			}
			// Other edits, and deleting it, are not this rule's business.
			if err := alice.Patch(ctx, rr.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"note":"kept"}}}`))); err != nil {
				t.Fatalf("an edit that keeps the finalizer: %v", err)
			}
			// The launcher removes it once it has restored them; here,
			// at once, as its identity.
			if err := strip(launcherClient, rr); err != nil {
				t.Fatalf("the launcher removing its own finalizer: %v", err)
			}
		}
		restored := paused("restored", v1alpha1.ConsumerRestored)
		if err := strip(alice, restored); err != nil {
			t.Fatalf("the finalizer of a request whose consumers are restored: %v", err)
		}
	})

	// Issue 30: a child request (docs/groups.md) carries its parent's
	// requester and is adopted by the parent as what it approved; only the
	// launcher makes one, as its ServiceAccount, and nobody makes a request
	// a child afterwards.
	// The launcher's ServiceAccount, as the API server names it, with the
	// right to create requests here (its chart role grants the rest).
	var launcherSA string
	for _, u := range byKind(objs, "ServiceAccount") {
		if strings.HasSuffix(u.GetName(), "-launcher") {
			launcherSA = u.GetName()
		}
	}
	launcherClient := asUser(t, cfg, "system:serviceaccount:"+releaseNamespace+":"+launcherSA, "system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace)
	grant(ctx, t, admin, ns, "create-requests-launcher", "system:serviceaccount:"+releaseNamespace+":"+launcherSA, rbacv1.PolicyRule{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"create"},
	})

	t.Run("child requests", func(t *testing.T) {
		parent := testutil.MakeRequest(ns, "parent").Obj()
		parent.Spec.Group, parent.Spec.Groups = "", []string{"billing", "audit"}
		if err := alice.Create(ctx, parent); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = admin.Delete(context.Background(), parent) }()
		ctrl := true
		owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: parent.Name, UID: parent.UID, Controller: &ctrl}
		labelled := testutil.MakeRequest(ns, "by-label").Obj()
		labelled.Labels = map[string]string{v1alpha1.LabelParent: parent.Name}
		owned := testutil.MakeRequest(ns, "by-owner").Obj()
		owned.OwnerReferences = []metav1.OwnerReference{owner}
		for who, c := range map[string]client.Client{user: alice, "an admin": admin} {
			for _, rr := range []*v1alpha1.ReplayRequest{labelled, owned} {
				err := c.Create(ctx, rr.DeepCopy(), client.DryRunAll)
				if err == nil || !strings.Contains(err.Error(), "only the launcher makes child requests") {
					t.Errorf("%s created %s, a forged child: %v", who, rr.Name, err)
				}
			}
		}
		// Nor is an existing request made a child afterwards.
		plain := testutil.MakeRequest(ns, "plain").Obj()
		if err := alice.Create(ctx, plain); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = admin.Delete(context.Background(), plain) }()
		for _, patch := range []string{
			`{"metadata":{"labels":{"` + v1alpha1.LabelParent + `":"parent"}}}`,
			`{"metadata":{"ownerReferences":[{"apiVersion":"kafkareplay.dev/v1alpha1","kind":"ReplayRequest","name":"parent","uid":"` + string(parent.UID) + `"}]}}`,
		} {
			if err := admin.Patch(ctx, plain.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err == nil || !strings.Contains(err.Error(), "only the launcher makes child requests") {
				t.Errorf("an admin made a request a child with %s: %v", patch, err)
			}
		}
		// The launcher's child keeps the parent's requester (not the
		// launcher's), though the launcher may not use the Secret it names.
		child := testutil.MakeRequest(ns, "parent-child").Secret("kafka-prod").Obj()
		child.Labels = map[string]string{v1alpha1.LabelParent: parent.Name}
		child.OwnerReferences = []metav1.OwnerReference{owner}
		child.Annotations = map[string]string{annotationRequestedBy: parent.Annotations[annotationRequestedBy], annotationRequestedByGroups: parent.Annotations[annotationRequestedByGroups]}
		if err := launcherClient.Create(ctx, child, client.DryRunAll); err != nil {
			t.Fatalf("the launcher creating a child: %v", err)
		}
		if got := child.Requester(); got != user {
			t.Errorf("the child's requester is %q, want the parent's %q", got, user)
		}
		// Made for real, the launcher approves its plan in the name of the
		// parent's approver, which it copies: neither the verb approve nor
		// the stamp is the launcher's.
		child = testutil.MakeRequest(ns, "parent-child").Obj()
		child.Labels = map[string]string{v1alpha1.LabelParent: parent.Name}
		child.OwnerReferences = []metav1.OwnerReference{owner}
		child.Annotations = map[string]string{annotationRequestedBy: parent.Annotations[annotationRequestedBy], annotationRequestedByGroups: parent.Annotations[annotationRequestedByGroups]}
		if err := launcherClient.Create(ctx, child); err != nil {
			t.Fatalf("the launcher creating a child: %v", err)
		}
		defer func() { _ = admin.Delete(context.Background(), child) }()
		approve := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationApprove + `":"0123456789abcdef","` + v1alpha1.AnnotationApprovedBy + `":"bob"}}}`)
		if err := launcherClient.Patch(ctx, child, client.RawPatch("application/merge-patch+json", approve)); err != nil {
			t.Fatalf("the launcher approving a child: %v", err)
		}
		if got := child.Annotations[v1alpha1.AnnotationApprovedBy]; got != "bob" {
			t.Errorf("the child's approver is %q, want the parent's approver bob", got)
		}
		// The launcher making a request that is no child is stamped, and
		// held to the creator's rights, as anyone.
		mine := testutil.MakeRequest(ns, "launcher-own").Secret("kafka-prod").Obj()
		if err := launcherClient.Create(ctx, mine, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "may neither get nor use Secret") {
			t.Errorf("the launcher created a request, no child, naming a Secret it may not use: %v", err)
		}
	})

	t.Run("launcher Jobs", func(t *testing.T) {
		var launcherSA string
		for _, u := range byKind(objs, "ServiceAccount") {
			if strings.HasSuffix(u.GetName(), "-launcher") {
				launcherSA = u.GetName()
			}
		}
		if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		launcherClient := asUser(t, cfg, "system:serviceaccount:"+releaseNamespace+":"+launcherSA, "system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace)
		opts := launcherOptions(t, objs)
		rr := testutil.MakeRequest(ns, "orders-rewind").Secret("kafka-prod").ConfigMap("kafka-client").
			Offsets(v1alpha1.PartitionOffset{Topic: "orders", Partition: 0, Offset: 1}).Obj()
		rr.UID = "0b6c1a52-4c1e-4f51-9d5e-1b2c3d4e5f60"
		rr.Status.ResolvedTarget = "offsets:1" // the offsets list: a downward API volume
		job, err := launcher.BuildJob(rr, launcher.StageApply, opts)
		if err != nil {
			t.Fatal(err)
		}
		job.OwnerReferences = nil // no such request stored
		// The launcher's own Job is admitted (wait for the policy).
		eventuallyDo(t, time.Minute, "the launcher's own Job", func() error {
			return launcherClient.Create(ctx, job.DeepCopy(), client.DryRunAll)
		})
		mirror := job.DeepCopy()
		mirror.Spec.Template.Spec.Containers[0].Image = "mirror.example.com/kafka-replay/runner@sha256:" + strings.Repeat("a", 64)
		if err := launcherClient.Create(ctx, mirror, client.DryRunAll); err != nil {
			t.Errorf("an image under an allowed path: %v", err)
		}

		refused := []struct {
			name   string
			change func(*batchv1.Job)
			want   string
		}{
			{"another image", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "docker.io/library/busybox:1" }, "not an allowed runner image"},
			{"a longer repository", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].Image = "registry.example.com/kafka-replay-runner-evil:1"
			}, "not an allowed runner image"},
			{"a longer registry", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].Image = "registry.example.com.attacker.io/kafka-replay-runner:1"
			}, "not an allowed runner image"},
			{"a path beside the allowed one", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].Image = "mirror.example.com/kafka-replay-evil/runner:1"
			}, "not an allowed runner image"},
			{"a hostPath volume", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Volumes = append(j.Spec.Template.Spec.Volumes, corev1.Volume{Name: "host",
					VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
			}, "mounts only ConfigMaps, Secrets and the downward API"},
			{"a projected ServiceAccount token", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Volumes = append(j.Spec.Template.Spec.Volumes, corev1.Volume{Name: "token",
					VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}})
			}, "mounts only ConfigMaps, Secrets and the downward API"},
			{"a Secret in the environment", func(j *batchv1.Job) {
				c := &j.Spec.Template.Spec.Containers[0]
				c.Env = append(c.Env, corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "other"}, Key: "k"}}})
			}, "environment is values"},
			{"a token", func(j *batchv1.Job) { j.Spec.Template.Spec.AutomountServiceAccountToken = nil }, "fixed security context"},
			{"a capability added", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
			}, "fixed security context"},
			{"a writable root", func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = ptr.To(false)
			}, "fixed security context"},
			{"another command", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Command = []string{"/bin/sh"} }, "own entrypoint"},
			{"no runner label", func(j *batchv1.Job) { delete(j.Labels, v1alpha1.LabelRunner) }, "only runner Jobs"},
		}
		for _, tc := range refused {
			j := job.DeepCopy()
			tc.change(j)
			err := launcherClient.Create(ctx, j, client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
			}
		}
		// The policy binds the launcher only: an admin's Job is not its.
		j := job.DeepCopy()
		j.Spec.Template.Spec.Containers[0].Image = "docker.io/library/busybox:1"
		if err := admin.Create(ctx, j, client.DryRunAll); err != nil {
			t.Errorf("an admin's Job with another image: %v", err)
		}

		// The apply Job of an approved plan, its input ConfigMap mounted.
		manual := testutil.MakeRequest(ns, "orders-plan").ShiftBy(-10).Manual().Annotate(v1alpha1.AnnotationApprove, "0123456789abcdef").Annotate(v1alpha1.AnnotationApprovedBy, "bob").Obj()
		manual.UID = rr.UID
		manual.Status.ResolvedTarget = "shift:-10"
		manual.Status.Plan = &v1alpha1.PlanSummary{Digest: "0123456789abcdef", JobName: launcher.JobName(manual, launcher.StagePlan)}
		manual.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: "0123456789abcdef"}
		applyJob, err := launcher.BuildJobWithInput(manual, launcher.StageApply, opts, &launcher.Input{
			Kind: launcher.InputPlan, ConfigMap: launcher.InputConfigMapName(launcher.JobName(manual, launcher.StageApply)), Digest: "sha256:" + strings.Repeat("0", 64)})
		if err != nil {
			t.Fatal(err)
		}
		applyJob.OwnerReferences = nil
		if err := launcherClient.Create(ctx, applyJob, client.DryRunAll); err != nil {
			t.Errorf("the apply Job of an approved plan: %v", err)
		}

		// The list Job of a groupSelector, its Secret and ConfigMap mounted.
		sel := testutil.MakeRequest(ns, "incident").Select("billing-").Secret("kafka-prod").ConfigMap("kafka-client").Obj()
		sel.UID = rr.UID
		listJob, err := launcher.BuildListJob(sel, opts)
		if err != nil {
			t.Fatal(err)
		}
		listJob.OwnerReferences = nil
		if err := launcherClient.Create(ctx, listJob, client.DryRunAll); err != nil {
			t.Errorf("the list Job of a groupSelector: %v", err)
		}
	})

	t.Run("approval", func(t *testing.T) {
		approval(ctx, t, cfg, admin, objs, ns, alice, user, launcherClient)
	})
}

// approval: approving or rejecting a plan takes the verb approve on the
// request, which alice (who may create and patch requests, as an editor)
// lacks; bob, bound to the chart's approver ClusterRole, has it, and is
// stamped as the approver whatever he writes; dave, with approve on one
// request by resourceNames, may approve that one only. Nobody writes
// approved-by without deciding, not even an admin. A child request's plan
// is decided by the launcher alone: bob, alice and an admin are refused,
// told to decide its parent, which bob may.
func approval(ctx context.Context, t *testing.T, cfg *rest.Config, admin client.Client, objs []*unstructured.Unstructured, ns string, alice client.Client, user string, launcherClient client.Client) {
	group := []string{v1alpha1.GroupVersion.Group}
	grant(ctx, t, admin, ns, "patch-requests", user, rbacv1.PolicyRule{
		APIGroups: group, Resources: []string{"replayrequests"}, Verbs: []string{"get", "patch"},
	})
	var approverRole string
	for _, u := range byKind(objs, "ClusterRole") {
		if strings.HasSuffix(u.GetName(), "-approver") {
			approverRole = u.GetName()
		}
	}
	if approverRole == "" {
		t.Fatalf("the chart renders no approver ClusterRole: %v", kinds(objs))
	}
	bob := asUser(t, cfg, "bob", "team-sre")
	if err := admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob-approves"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: approverRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "bob"}},
	}); err != nil {
		t.Fatal(err)
	}
	dave := asUser(t, cfg, "dave")
	grant(ctx, t, admin, ns, "dave-approves-one", "dave",
		rbacv1.PolicyRule{APIGroups: group, Resources: []string{"replayrequests"}, Verbs: []string{"get", "patch"}},
		rbacv1.PolicyRule{APIGroups: group, Resources: []string{"replayrequests"}, Verbs: []string{"approve"}, ResourceNames: []string{"scoped-a"}},
	)

	stored := func(name string) *v1alpha1.ReplayRequest {
		rr := testutil.MakeRequest(ns, name).ShiftBy(-10).Manual().Obj()
		if err := alice.Create(ctx, rr); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), rr) })
		return rr
	}
	annotate := func(c client.Client, rr *v1alpha1.ReplayRequest, change map[string]any) error {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": change}})
		return c.Patch(ctx, rr, client.RawPatch("application/merge-patch+json", patch))
	}
	const digest = "0123456789abcdef"
	rr := stored("to-approve")

	// bob's binding reaches the authorizer some time after it is made.
	eventuallyDo(t, time.Minute, "bob may approve", func() error {
		return annotate(bob, rr.DeepCopy(), map[string]any{v1alpha1.AnnotationApprove: "not-yet-the-digest"})
	})
	for _, tc := range []struct {
		name   string
		c      client.Client
		change map[string]any
		want   string
	}{
		{"alice approves", alice, map[string]any{v1alpha1.AnnotationApprove: digest}, "may not approve or reject ReplayRequest to-approve"},
		{"alice rejects", alice, map[string]any{v1alpha1.AnnotationReject: "no"}, "verb approve"},
		{"alice removes the approval", alice, map[string]any{v1alpha1.AnnotationApprove: nil}, "verb approve"},
		{"alice names an approver", alice, map[string]any{v1alpha1.AnnotationApprovedBy: "carol"}, "set by the API server"},
		{"an admin names an approver without deciding", admin, map[string]any{v1alpha1.AnnotationApprovedBy: "alice"}, "set by the API server"},
	} {
		err := annotate(tc.c, rr.DeepCopy(), tc.change)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
	// Creating a request already approved takes the right too.
	pre := testutil.MakeRequest(ns, "pre-approved").ShiftBy(-10).Manual().Annotate(v1alpha1.AnnotationApprove, digest).Obj()
	if err := alice.Create(ctx, pre, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "verb approve") {
		t.Errorf("alice creating an approved request: %v", err)
	}

	// bob approves, writing someone else's name: he is stamped.
	got := rr.DeepCopy()
	if err := annotate(bob, got, map[string]any{v1alpha1.AnnotationApprove: digest, v1alpha1.AnnotationApprovedBy: "mallory"}); err != nil {
		t.Fatal(err)
	}
	if by := got.Annotations[v1alpha1.AnnotationApprovedBy]; by != "bob" {
		t.Errorf("approved-by = %q, want bob", by)
	}
	// Other changes keep the stamp (the launcher's finalizer, a label).
	if err := admin.Patch(ctx, got.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"reviewed":"yes"}}}`))); err != nil {
		t.Errorf("a label change after the approval: %v", err)
	}

	// resourceNames scope the right.
	a, b := stored("scoped-a"), stored("scoped-b")
	eventuallyDo(t, time.Minute, "dave approves scoped-a", func() error {
		return annotate(dave, a.DeepCopy(), map[string]any{v1alpha1.AnnotationApprove: digest})
	})
	if err := annotate(dave, b.DeepCopy(), map[string]any{v1alpha1.AnnotationApprove: digest}); err == nil || !strings.Contains(err.Error(), "verb approve") {
		t.Errorf("dave approving scoped-b: %v", err)
	}

	childDecisions(ctx, t, admin, ns, alice, bob, launcherClient, annotate)
}

// childDecisions: a decision on a child request (one group of a parent,
// docs/groups.md) is the launcher's alone, on behalf of the parent's one
// approval; whoever else sets, changes or removes one, even with the verb
// approve (bob) or as an admin, is refused and told to decide the parent.
// The child is found by its label or by its owner reference alike.
func childDecisions(ctx context.Context, t *testing.T, admin client.Client, ns string, alice, bob, launcherClient client.Client, annotate func(client.Client, *v1alpha1.ReplayRequest, map[string]any) error) {
	parent := testutil.MakeRequest(ns, "decided-parent").ShiftBy(-10).Manual().Obj()
	parent.Spec.Group, parent.Spec.Groups = "", []string{"billing", "audit"}
	if err := alice.Create(ctx, parent); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), parent) })
	ctrl := true
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: parent.Name, UID: parent.UID, Controller: &ctrl}
	child := func(name string, labelled, owned bool) *v1alpha1.ReplayRequest {
		rr := testutil.MakeRequest(ns, name).ShiftBy(-10).Manual().Obj()
		if labelled {
			rr.Labels = map[string]string{v1alpha1.LabelParent: parent.Name}
		}
		if owned {
			rr.OwnerReferences = []metav1.OwnerReference{owner}
		}
		rr.Annotations = map[string]string{annotationRequestedBy: parent.Annotations[annotationRequestedBy], annotationRequestedByGroups: parent.Annotations[annotationRequestedByGroups]}
		if err := launcherClient.Create(ctx, rr); err != nil {
			t.Fatalf("the launcher creating child %s: %v", name, err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), rr) })
		return rr
	}
	const digest = "fedcba9876543210"
	want := "may not approve or reject ReplayRequest %s: it is a child of " + parent.Name + ", whose one plan covers all its groups; approve or reject " + parent.Name + " instead (kubectl replay approve " + parent.Name + " -n " + ns + ")"
	for _, rr := range []*v1alpha1.ReplayRequest{child("decided-both", true, true), child("decided-label", true, false), child("decided-owner", false, true)} {
		for _, tc := range []struct {
			who    string
			c      client.Client
			change map[string]any
		}{
			{"bob (verb approve) approves", bob, map[string]any{v1alpha1.AnnotationApprove: digest}},
			{"bob rejects", bob, map[string]any{v1alpha1.AnnotationReject: "no"}},
			{"alice (no verb approve) approves", alice, map[string]any{v1alpha1.AnnotationApprove: digest}},
			{"an admin approves", admin, map[string]any{v1alpha1.AnnotationApprove: digest}},
			{"an admin rejects", admin, map[string]any{v1alpha1.AnnotationReject: "no"}},
		} {
			err := annotate(tc.c, rr.DeepCopy(), tc.change)
			if w := fmt.Sprintf(want, rr.Name); err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), w) {
				t.Errorf("%s child %s: %v, want a refusal saying %q", tc.who, rr.Name, err, w)
			}
		}
	}
	// The launcher decides, in the parent's approver's name; nobody else
	// changes or removes its decision.
	rr := child("decided-by-launcher", true, true)
	got := rr.DeepCopy()
	if err := annotate(launcherClient, got, map[string]any{v1alpha1.AnnotationApprove: digest, v1alpha1.AnnotationApprovedBy: "bob"}); err != nil {
		t.Fatalf("the launcher approving a child: %v", err)
	}
	if by := got.Annotations[v1alpha1.AnnotationApprovedBy]; by != "bob" {
		t.Errorf("the child's approver is %q, want the parent's approver bob", by)
	}
	for _, tc := range []struct {
		who    string
		c      client.Client
		change map[string]any
	}{
		{"bob removes the launcher's approval", bob, map[string]any{v1alpha1.AnnotationApprove: nil}},
		{"bob changes the approved digest", bob, map[string]any{v1alpha1.AnnotationApprove: "0000000000000000"}},
		{"an admin rejects the approved child", admin, map[string]any{v1alpha1.AnnotationReject: "no"}},
	} {
		err := annotate(tc.c, got.DeepCopy(), tc.change)
		if w := fmt.Sprintf(want, rr.Name); err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.who, err, w)
		}
	}
	if err := annotate(launcherClient, got.DeepCopy(), map[string]any{v1alpha1.AnnotationReject: "rejected with its parent", v1alpha1.AnnotationApprovedBy: "bob"}); err != nil {
		t.Errorf("the launcher rejecting a child: %v", err)
	}
	// The parent is decided as any request: bob approves it, stamped.
	p := parent.DeepCopy()
	if err := annotate(bob, p, map[string]any{v1alpha1.AnnotationApprove: "sha256:" + strings.Repeat("0", 64)}); err != nil {
		t.Fatalf("bob approving the parent: %v", err)
	}
	if by := p.Annotations[v1alpha1.AnnotationApprovedBy]; by != "bob" {
		t.Errorf("the parent's approver is %q, want bob", by)
	}
}

// Without MutatingAdmissionPolicy (an older API server), nothing stamps
// the requester: a creator may leave it out (the launcher records
// "unknown") or write its own name, never anyone else's.
func TestAdmissionPoliciesWithoutMutatingPolicy(t *testing.T) {
	cfg := controlPlane(t)
	helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, _ := newClient(t, cfg)
	const ns, scope = "kafka-replay-admission-vap", "kafka-replay-admission-vap-test"
	scopedNamespace(ctx, t, admin, ns, scope)
	admissionRelease(ctx, t, admin, "adm-vap", scope, false)
	const user = "carol"
	carol := asUser(t, cfg, user, "team-payments")
	grant(ctx, t, admin, ns, "create-requests", user, rbacv1.PolicyRule{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"create"},
	})
	forged := func() *v1alpha1.ReplayRequest {
		rr := testutil.MakeRequest(ns, "forged").Obj()
		rr.Annotations = map[string]string{annotationRequestedBy: "admin"}
		return rr
	}
	enforced(t, "the request policy", func() error {
		if err := carol.Create(ctx, forged(), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "set by the API server") {
			return fmt.Errorf("a forged requester: %w", err)
		}
		return nil
	})
	plain := testutil.MakeRequest(ns, "plain").Obj()
	if err := carol.Create(ctx, plain, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if _, stamped := plain.Annotations[annotationRequestedBy]; stamped {
		t.Errorf("stamped without a mutating policy: %v", plain.Annotations)
	}

	// Likewise the approver: one who may approve may leave it out or write
	// its own name, never anyone else's.
	grant(ctx, t, admin, ns, "approve-requests", user, rbacv1.PolicyRule{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"get", "patch", "approve"},
	})
	manual := testutil.MakeRequest(ns, "manual").ShiftBy(-10).Manual().Obj()
	if err := carol.Create(ctx, manual); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Delete(context.Background(), manual) }()
	approve := func(by string) error {
		ann := map[string]any{v1alpha1.AnnotationApprove: "0123456789abcdef"}
		if by != "" {
			ann[v1alpha1.AnnotationApprovedBy] = by
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
		return carol.Patch(ctx, manual.DeepCopy(), client.RawPatch("application/merge-patch+json", patch), client.DryRunAll)
	}
	eventuallyDo(t, time.Minute, "carol may approve", func() error { return approve("") })
	if err := approve(user); err != nil {
		t.Errorf("carol approving in her own name: %v", err)
	}
	if err := approve("admin"); err == nil || !strings.Contains(err.Error(), "set by the API server") {
		t.Errorf("carol approving in admin's name: %v", err)
	}
}
