package runner

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Once a commit may have happened, the run's outcome must reach at least
// one of the places that record it (the result file, the termination
// message, stdout) whatever happens to the others or to the process. So,
// just before the commit, checkOutputs proves each place writable by
// writing to it the one outcome that is true from then until the
// read-back decides: OutcomeUnknown. A run killed mid-commit (by the
// kernel for memory, by SIGKILL, by a crash in librdkafka) leaves that
// behind instead of nothing, and the final result replaces it. A place
// that cannot be written refuses the run before anything is committed.

// pendingError is what the result written before the commit says.
const pendingError = "the runner ended after its commit began and before it read the outcome back: the commit may have applied; retry with the same run ID, which finds this run's commit or makes it"

// checkOutputs writes the pending outcome of committing plan to the
// result file and the termination message, and checks that stdout can
// still be written. An error means nothing may be committed: it names the
// place, and is an input error (exit 2), or an interruption (exit 6) for a
// stdout whose reader has gone, as the SIGPIPE a write would raise is.
func (r *run) checkOutputs(res *report.Result, plan *Plan) error {
	if stdoutGone(r.stdout) {
		return fmt.Errorf("%w before the commit (stdout is a pipe whose reader has gone: the result written there would be lost)", errInterrupted)
	}
	p := *res
	p.Partitions = slices.Clone(res.Partitions)
	p.Warnings = slices.Clone(res.Warnings)
	for i := range p.Partitions {
		if plan.Commit[i] {
			p.Partitions[i].Error = "outcome unknown: the runner ended during the commit; read the group's offsets"
		}
	}
	p.ExitCode, p.Reason, p.Error = report.ExitPartiallyApplied, report.ReasonOutcomeUnknown, pendingError
	p.FinishedAt = r.now().UTC()
	p.Summarize()
	redactResult(&p, r.red)
	record := r.record
	if record == nil {
		record = func(p *report.Result) error { _, err := writeRecorded(r.cfg, p); return err }
	}
	if err := record(&p); err != nil {
		var pe *placeError
		errors.As(err, &pe)
		return &inputError{field: pe.setting, msg: fmt.Sprintf("cannot be written (%v), so the result would be lost there after the commit; nothing was committed", pe.err)}
	}
	return nil
}

// stdoutWriter is an output that may be a file (the process's stdout).
type stdoutWriter interface {
	io.Writer
	Fd() uintptr
}
