package v1alpha1

// Who asked for a replay. The chart's MutatingAdmissionPolicy writes these
// annotations when a ReplayRequest is created, from the API server's own
// record of the creator, over whatever the request said; its
// ValidatingAdmissionPolicy refuses any later change, and, where the API
// server has no MutatingAdmissionPolicy, any value but the creator's own
// name (charts/kafka-replay/templates/admission-requests.yaml,
// docs/security.md). Without the chart's policies they are whatever the
// request's writer put there.
const (
	// AnnotationRequestedBy is the username of the request's creator.
	AnnotationRequestedBy = "kafkareplay.dev/requested-by"
	// AnnotationRequestedByGroups is the creator's groups, comma-separated.
	AnnotationRequestedByGroups = "kafkareplay.dev/requested-by-groups"
	// RequesterUnknown is the requester of a request nothing stamped.
	RequesterUnknown = "unknown"
)

// Requester is who created the request, as the admission policies stamped
// it, or RequesterUnknown.
func (r *ReplayRequest) Requester() string {
	if u := r.Annotations[AnnotationRequestedBy]; u != "" {
		return u
	}
	return RequesterUnknown
}
