// Package v1alpha1 is the kafkareplay.dev/v1alpha1 API: the ReplayRequest, a
// namespaced request to move one Kafka consumer group's committed offsets,
// which the launcher runs as a Job of the runner.
//
// The package is cgo-free and has no controller code, so that the chart's
// tests, the end-to-end harness and other tools can import the types and the
// label and annotation names below without linking the launcher.
//
// +kubebuilder:object:generate=true
// +groupName=kafkareplay.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "kafkareplay.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
