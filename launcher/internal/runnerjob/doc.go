// Package runnerjob builds a runner Job from a request: its name, labels and
// annotations, the runner's environment (the one place that knows the
// runner's environment names), its volumes and the input ConfigMap a plan or
// an undo reaches the runner through, and the runner image a request may
// name. It reads back what it wrote: whether a Job is a dry run (DryRun) and
// what an undo's Job undoes (UndoFromJob). It is pure: the launcher checks a
// request before it asks for its Job, and creates what this package builds.
package runnerjob
