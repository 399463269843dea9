// Package v1alpha1 is the kafkareplay.dev/v1alpha1 API: the ReplayRequest, a
// namespaced request to move one Kafka consumer group's committed offsets,
// which the launcher runs as a Job of the runner, and the ReplayRecord, the
// complete record the launcher keeps of every finished runner Job.
//
// The package is cgo-free and has no controller code (only the standard
// library, k8s.io/apimachinery and k8s.io/api), so that the chart's tests,
// the end-to-end harness and other tools can import the types and the label
// and annotation names without linking the launcher.
//
// +kubebuilder:object:generate=true
// +groupName=kafkareplay.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "kafkareplay.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ReplayRequest{}, &ReplayRequestList{}, &ReplayRecord{}, &ReplayRecordList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
