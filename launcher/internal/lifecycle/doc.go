// Package lifecycle decides which step a request is at from what a
// reconcile read (Observed: the request, its Job, its planning Job):
// DecidePhase, and ControlledBy, the only Job a request adopts as its own.
// It is pure: the launcher reads, then runs the phase's handler.
package lifecycle
