package replay

import (
	"strings"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// IsParent reports whether rr is a request over several groups (a parent,
// docs/groups.md), whose groups are replayed by child requests of their
// own: spec.groups, a selector, or the undo of such a request. The
// launcher's parent reconciler runs these (the one-group reconciler
// leaves them alone), and the plugin shows them group by group.
func IsParent(rr *v1alpha1.ReplayRequest) bool {
	return len(rr.Spec.Groups) > 0 || rr.Spec.GroupSelector != nil || IsUndoParent(rr)
}

// IsUndoParent reports whether rr is the undo of a parent: target.undoOf
// without a group of its own (a one-group undo names its group, or its
// consumerRef does).
func IsUndoParent(rr *v1alpha1.ReplayRequest) bool {
	return rr.Spec.Target.UndoOf != nil && rr.Spec.Group == "" && rr.Spec.ConsumerRef == nil && len(rr.Spec.Groups) == 0 && rr.Spec.GroupSelector == nil
}

// PlansFirst reports whether a parent's groups all plan before any
// applies: with approval: Manual, for a person to approve the plan; and
// with limits.maxTotalMessagesToReconsume, which can only be judged over
// every group's plan, and must be before any offset moves. A dry run
// moves nothing: its groups run as dry runs, and the guard is judged over
// their results.
func PlansFirst(parent *v1alpha1.ReplayRequest) bool {
	total := parent.Spec.Limits != nil && parent.Spec.Limits.MaxTotalMessagesToReconsume != nil
	return parent.Spec.Approval == v1alpha1.ApprovalManual || (total && !parent.Spec.DryRun)
}

// IsChild reports whether rr is a child request, one group of a parent
// (docs/groups.md): the parent label, or an owner reference to a
// ReplayRequest. The chart's admission policy reads a child the same way,
// and lets only the launcher make one or decide its plan.
func IsChild(rr *v1alpha1.ReplayRequest) bool {
	if _, ok := rr.Labels[v1alpha1.LabelParent]; ok {
		return true
	}
	for _, o := range rr.OwnerReferences {
		if o.Kind == "ReplayRequest" && strings.HasPrefix(o.APIVersion, v1alpha1.GroupVersion.Group+"/") {
			return true
		}
	}
	return false
}
