package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// The consumers' reads and writes. Workloads are read past the cache (the
// launcher caches only its own objects, and may get, not list or watch,
// workloads), and every write carries the resourceVersion it was decided
// on, so that a change made by someone else in between is a conflict, never
// overwritten.
//
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale,verbs=get;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list;patch

// errConsumer is a consumer that cannot be paused as named (missing, KEDA
// support off, not a scale target): the request fails, nothing retries it.
type errConsumer struct{ msg string }

func (e errConsumer) Error() string { return e.msg }

// consumerError is a consumer read's error in the reader's words: a
// workload that is not there is named with the namespace searched, which
// is the request's own (the API server's `deployments.apps "x" not found`
// says neither where it looked nor why there), and fails the request. It
// is pure.
func consumerError(what, ns string, err error) error {
	if apierrors.IsNotFound(err) {
		return errConsumer{fmt.Sprintf("consumers: %s not found in namespace %s: spec.consumers names workloads in the request's own namespace; check the kind and name (kubectl -n %s get %s)",
			what, ns, ns, kubectlKind(what))}
	}
	return fmt.Errorf("consumers: %s: %w", what, err)
}

// kubectlKind is the kubectl resource of "Kind name" or "Kind/name".
func kubectlKind(what string) string {
	kind, _, _ := strings.Cut(strings.Replace(what, "/", " ", 1), " ")
	return strings.ToLower(kind) + "s"
}

// permanent reports whether a consumer call's error is one no retry changes.
func permanent(err error) bool {
	var ec errConsumer
	return errors.As(err, &ec) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || meta.IsNoMatchError(err)
}

// recordConsumer reads one named consumer and says how it will be paused and
// what it is now. It changes nothing.
func (r *ReplayRequestReconciler) recordConsumer(ctx context.Context, ns string, ref v1alpha1.ConsumerRef) (v1alpha1.ConsumerStatus, error) {
	c := v1alpha1.ConsumerStatus{Kind: ref.Kind, Name: ref.Name, State: v1alpha1.ConsumerRecorded}
	if ref.Kind == v1alpha1.ConsumerKafkaSource {
		return r.recordKafkaSource(ctx, ns, c)
	}
	if ref.Kind == v1alpha1.ConsumerKafkaConnector {
		return r.recordConnector(ctx, ns, c)
	}
	if ref.Kind == v1alpha1.ConsumerScaledObject {
		if r.Options.NoKEDA {
			return c, errConsumer{fmt.Sprintf("consumers: ScaledObject %s: KEDA support is turned off in this launcher", ref.Name)}
		}
		so, err := r.getScaledObject(ctx, ns, ref.Name)
		if err != nil {
			return c, consumerError("ScaledObject "+ref.Name, ns, err)
		}
		recordKEDA(&c, so)
		return c, nil
	}
	var obj client.Object = &appsv1.Deployment{}
	if ref.Kind == v1alpha1.ConsumerStatefulSet {
		obj = &appsv1.StatefulSet{}
	}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, obj); err != nil {
		return c, consumerError(string(ref.Kind)+" "+ref.Name, ns, err)
	}
	c.Workload = string(ref.Kind) + "/" + ref.Name
	if !r.Options.NoKEDA {
		so, err := r.scaledObjectFor(ctx, ns, string(ref.Kind), ref.Name)
		if err != nil {
			return c, fmt.Errorf("consumers: ScaledObjects targeting %s: %w", c.Workload, err)
		}
		if so != nil {
			recordKEDA(&c, so)
			c.Warnings = consumers.PauseWarnings(c.Workload, c.Method, obj.GetLabels(), obj.GetAnnotations(), nil)
			return c, nil
		}
	}
	var scale autoscalingv1.Scale
	if err := r.Client.SubResource("scale").Get(ctx, obj, &scale); err != nil {
		return c, fmt.Errorf("consumers: %s scale: %w", c.Workload, err)
	}
	c.Method = v1alpha1.PauseScale
	c.Replicas = &scale.Spec.Replicas
	hpas, err := r.hpasFor(ctx, ns, string(ref.Kind), ref.Name)
	if err != nil {
		return c, fmt.Errorf("consumers: HorizontalPodAutoscalers of %s: %w", c.Workload, err)
	}
	c.Warnings = consumers.PauseWarnings(c.Workload, c.Method, obj.GetLabels(), obj.GetAnnotations(), hpas)
	return c, nil
}

func recordKEDA(c *v1alpha1.ConsumerStatus, so *unstructured.Unstructured) {
	c.Method = v1alpha1.PauseKEDA
	c.ScaledObject = so.GetName()
	kind, name := scaleTarget(so)
	c.Workload = kind + "/" + name
	ann := so.GetAnnotations()
	if v, ok := ann[consumers.AnnotationKEDAPaused]; ok {
		c.PreviousPaused = &v
	}
	if v, ok := ann[consumers.AnnotationKEDAPausedReplicas]; ok {
		c.PreviousPausedReplicas = &v
	}
}

// scaleTarget is a ScaledObject's spec.scaleTargetRef kind (Deployment when
// unset, as KEDA reads it) and name.
func scaleTarget(so *unstructured.Unstructured) (kind, name string) {
	kind, _, _ = unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ = unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "name")
	if kind == "" {
		kind = "Deployment"
	}
	return kind, name
}

func (r *ReplayRequestReconciler) getScaledObject(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	so := &unstructured.Unstructured{}
	so.SetGroupVersionKind(consumers.ScaledObjectGVK)
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, so); err != nil {
		return nil, err
	}
	return so, nil
}

// scaledObjectFor finds the ScaledObject that scales a workload, if any. A
// cluster without KEDA's CRD has none.
func (r *ReplayRequestReconciler) scaledObjectFor(ctx context.Context, ns, kind, name string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(consumers.ScaledObjectGVK.GroupVersion().WithKind("ScaledObjectList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	for i := range list.Items {
		if k, n := scaleTarget(&list.Items[i]); k == kind && n == name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// hpasFor names the HorizontalPodAutoscalers that target a workload.
func (r *ReplayRequestReconciler) hpasFor(ctx context.Context, ns, kind, name string) ([]string, error) {
	var list autoscalingv2.HorizontalPodAutoscalerList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []string
	for _, h := range list.Items {
		if h.Spec.ScaleTargetRef.Kind == kind && h.Spec.ScaleTargetRef.Name == name {
			out = append(out, h.Name)
		}
	}
	return out, nil
}

func workloadObject(ns, kindName string) (client.Object, error) {
	var kind, name string
	for i := range kindName {
		if kindName[i] == '/' {
			kind, name = kindName[:i], kindName[i+1:]
			break
		}
	}
	switch kind {
	case string(v1alpha1.ConsumerDeployment):
		return &appsv1.Deployment{ObjectMeta: objectMeta(ns, name)}, nil
	case string(v1alpha1.ConsumerStatefulSet):
		return &appsv1.StatefulSet{ObjectMeta: objectMeta(ns, name)}, nil
	}
	return nil, errConsumer{fmt.Sprintf("consumers: %s is not a Deployment or StatefulSet", kindName)}
}

// pauseConsumer pauses one recorded consumer. Pausing again is harmless.
func (r *ReplayRequestReconciler) pauseConsumer(ctx context.Context, ns string, c *v1alpha1.ConsumerStatus) error {
	if c.Method == v1alpha1.PauseState {
		return r.patchConnectorState(ctx, ns, c.Name, "", ptrTo(consumers.ConnectorStopped))
	}
	if c.Method == v1alpha1.PauseKEDA {
		return r.patchScaledObject(ctx, ns, c.ScaledObject, "", ptrTo(consumers.KEDAPausedValue), ptrTo(consumers.KEDAPausedReplicasValue))
	}
	if isKafkaSourceScale(c) {
		return r.patchKafkaSourceScale(ctx, ns, c.Name, "", 0)
	}
	obj, err := workloadObject(ns, c.Workload)
	if err != nil {
		return err
	}
	return r.patchScale(ctx, obj, "", 0)
}

// readConsumer is what a recorded consumer looks like now.
func (r *ReplayRequestReconciler) readConsumer(ctx context.Context, ns string, c *v1alpha1.ConsumerStatus) (consumers.WorkloadState, string, error) {
	if c.Method == v1alpha1.PauseState {
		return r.readConnector(ctx, ns, c.Name)
	}
	if c.Method == v1alpha1.PauseKEDA {
		so, err := r.getScaledObject(ctx, ns, c.ScaledObject)
		if apierrors.IsNotFound(err) {
			return consumers.WorkloadState{Gone: true}, "", nil
		}
		if err != nil {
			return consumers.WorkloadState{}, "", err
		}
		st := consumers.WorkloadState{}
		ann := so.GetAnnotations()
		if v, ok := ann[consumers.AnnotationKEDAPaused]; ok {
			st.Paused = &v
		}
		if v, ok := ann[consumers.AnnotationKEDAPausedReplicas]; ok {
			st.PausedReplicas = &v
		}
		return st, so.GetResourceVersion(), nil
	}
	if isKafkaSourceScale(c) {
		n, version, err := r.kafkaSourceScale(ctx, ns, c.Name)
		if apierrors.IsNotFound(err) {
			return consumers.WorkloadState{Gone: true}, "", nil
		}
		return consumers.WorkloadState{Replicas: n}, version, err
	}
	obj, err := workloadObject(ns, c.Workload)
	if err != nil {
		return consumers.WorkloadState{}, "", err
	}
	var scale autoscalingv1.Scale
	if err := r.Client.SubResource("scale").Get(ctx, obj, &scale); err != nil {
		if apierrors.IsNotFound(err) {
			return consumers.WorkloadState{Gone: true}, "", nil
		}
		return consumers.WorkloadState{}, "", err
	}
	return consumers.WorkloadState{Replicas: scale.Spec.Replicas}, scale.ResourceVersion, nil
}

// restoreConsumer puts one recorded consumer back as consumers.DecideRestore says, the
// write conditional on the version it decided on.
func (r *ReplayRequestReconciler) restoreConsumer(ctx context.Context, ns string, c *v1alpha1.ConsumerStatus) error {
	now, version, err := r.readConsumer(ctx, ns, c)
	if err != nil {
		return err
	}
	action, msg := consumers.DecideRestore(*c, now)
	if action == consumers.RestoreApply {
		switch {
		case c.Method == v1alpha1.PauseState:
			err = r.patchConnectorState(ctx, ns, c.Name, version, c.PreviousState)
		case c.Method == v1alpha1.PauseKEDA:
			err = r.patchScaledObject(ctx, ns, c.ScaledObject, version, c.PreviousPaused, c.PreviousPausedReplicas)
		case isKafkaSourceScale(c):
			err = r.patchKafkaSourceScale(ctx, ns, c.Name, version, state.ValueOr(c.Replicas, 0))
		default:
			var obj client.Object
			if obj, err = workloadObject(ns, c.Workload); err == nil {
				err = r.patchScale(ctx, obj, version, state.ValueOr(c.Replicas, 0))
			}
		}
		if err != nil {
			return err // a conflict is decided again on the next try
		}
	}
	c.State = v1alpha1.ConsumerRestored
	if action == consumers.RestoreLeave {
		c.State = v1alpha1.ConsumerNotRestored
	}
	c.Message = state.Truncate(msg, 1024)
	return nil
}

// patchScale sets a workload's replicas through its scale subresource, only
// at resourceVersion when it is given.
func (r *ReplayRequestReconciler) patchScale(ctx context.Context, obj client.Object, version string, replicas int32) error {
	body := map[string]any{"spec": map[string]any{"replicas": replicas}}
	if version != "" {
		body["metadata"] = map[string]any{"resourceVersion": version}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return r.Client.SubResource("scale").Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), &client.SubResourcePatchOptions{SubResourceBody: &autoscalingv1.Scale{}})
}

// patchScaledObject sets (nil: removes) KEDA's two pause annotations in one
// write, only at resourceVersion when it is given.
func (r *ReplayRequestReconciler) patchScaledObject(ctx context.Context, ns, name, version string, paused, pausedReplicas *string) error {
	ann := map[string]any{consumers.AnnotationKEDAPaused: nil, consumers.AnnotationKEDAPausedReplicas: nil}
	if paused != nil {
		ann[consumers.AnnotationKEDAPaused] = *paused
	}
	if pausedReplicas != nil {
		ann[consumers.AnnotationKEDAPausedReplicas] = *pausedReplicas
	}
	md := map[string]any{"annotations": ann}
	if version != "" {
		md["resourceVersion"] = version
	}
	data, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	so := &unstructured.Unstructured{}
	so.SetGroupVersionKind(consumers.ScaledObjectGVK)
	so.SetNamespace(ns)
	so.SetName(name)
	return r.Client.Patch(ctx, so, client.RawPatch(types.MergePatchType, data))
}

func ptrTo[T any](v T) *T { return &v }

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
