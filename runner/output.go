package runner

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// emit writes the result everywhere it is wanted: stdout, the result file
// (always, even on failure, because Argo collects output files whatever the
// exit code) and the termination message. Secret values are removed from all
// three.
func emit(cfg *config.Config, res *report.Result, stdout io.Writer, log *slog.Logger, red *config.Redactor) {
	full, err := report.Marshal(res)
	if err != nil {
		log.Error("cannot encode the result", "error", err.Error())
		return
	}
	full = []byte(red.Redact(string(full)))
	output, resultFile, termPath := config.OutputTable, "", config.DefaultTerminationMessagePath
	if cfg != nil {
		output, resultFile, termPath = cfg.Output, cfg.ResultFile, cfg.TerminationMessagePath
	}
	if output == config.OutputJSON {
		_, _ = stdout.Write(full)
	} else {
		writeTable(stdout, res)
	}
	if resultFile != "" {
		if err := writeFileAtomic(resultFile, full); err != nil {
			log.Error("cannot write the result file", "path", resultFile, "error", err.Error())
		}
	}
	if termPath != "" {
		compact, err := report.Compact(res, report.MaxTerminationMessageBytes)
		if err == nil {
			// Redaction can lengthen the text (a four-byte secret becomes
			// "[redacted]"), so the size is checked again.
			compact = []byte(red.Redact(string(compact)))
			if len(compact) > report.MaxTerminationMessageBytes {
				compact, err = report.Compact(&report.Result{Schema: res.Schema, Group: res.Group, RunID: res.RunID, ExitCode: res.ExitCode, Reason: res.Reason, Totals: res.Totals, Truncated: true}, report.MaxTerminationMessageBytes)
			}
		}
		if err == nil {
			err = writeTerminationMessage(termPath, compact)
		}
		// Outside a pod the default path does not exist; that is normal.
		outsidePod := termPath == config.DefaultTerminationMessagePath && os.IsNotExist(err)
		if err != nil && !outsidePod {
			log.Warn("cannot write the termination message", "path", termPath, "error", err.Error())
		}
	}
}

func writeTerminationMessage(path string, b []byte) error {
	// The kubelet provides the file; never create one elsewhere by accident
	// at the default path.
	flags := os.O_WRONLY | os.O_TRUNC
	if path != config.DefaultTerminationMessagePath {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// writeFileAtomic replaces path in one step, so a reader (Argo's wait
// container) never sees half a result.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".result-*")
	if err != nil {
		// Some mounts forbid extra files; fall back to a plain write.
		return os.WriteFile(path, b, 0o644)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeTable prints the plan or outcome the way kafka-consumer-groups.sh
// does, plus the delta and any note.
func writeTable(w io.Writer, res *report.Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	mode := "APPLIED"
	switch {
	case res.DryRun:
		mode = "DRY RUN (nothing committed)"
	case res.AlreadyApplied:
		mode = "ALREADY APPLIED (nothing committed again)"
	case res.ExitCode != report.ExitOK:
		mode = "FAILED: " + string(res.Reason)
	}
	_, _ = fmt.Fprintf(w, "GROUP %s  TARGET %s  RUN %s  %s\n", res.Group, targetLine(res.Target), res.RunID, mode)
	if len(res.Partitions) > 0 {
		_, _ = fmt.Fprintln(tw, "TOPIC\tPARTITION\tPREVIOUS\tNEW\tDELTA\tLOG-START\tLOG-END\tNOTE")
		for _, p := range res.Partitions {
			note := p.Note
			if p.Error != "" {
				note = strings.TrimSpace("ERROR: " + p.Error + " " + note)
			}
			_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d\t%d\t%s\n", p.Topic, p.Partition, optInt(p.PreviousOffset), p.NewOffset, signed(p.Delta), p.LogStartOffset, p.LogEndOffset, note)
		}
		_ = tw.Flush()
	}
	t := res.Totals
	_, _ = fmt.Fprintf(w, "TOTAL %d partition(s), %d message(s) to re-consume, %d skipped", t.Partitions, t.MessagesToReconsume, t.MessagesSkipped)
	if t.Clamped > 0 {
		_, _ = fmt.Fprintf(w, ", %d clamped", t.Clamped)
	}
	if t.NoPreviousOffset > 0 {
		_, _ = fmt.Fprintf(w, ", %d without a previous offset", t.NoPreviousOffset)
	}
	if t.Failed > 0 {
		_, _ = fmt.Fprintf(w, ", %d FAILED", t.Failed)
	}
	_, _ = fmt.Fprintln(w)
	if res.Error != "" {
		_, _ = fmt.Fprintf(w, "ERROR (exit %d, %s): %s\n", res.ExitCode, res.Reason, res.Error)
	}
}

func targetLine(t report.Target) string {
	if t.Resolved == "" || t.Resolved == t.Given {
		return t.Given
	}
	return t.Resolved + " (given " + t.Given + ")"
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func signed(p *int64) string {
	if p == nil {
		return "-"
	}
	if *p > 0 {
		return "+" + strconv.FormatInt(*p, 10)
	}
	return strconv.FormatInt(*p, 10)
}

// redactingWriter scrubs secret values from everything written through it.
// Writes are line-oriented (slog, the table, JSON), so a secret is never split
// across two writes in practice.
type redactingWriter struct {
	mu sync.Mutex
	w  io.Writer
	r  *config.Redactor
}

func (rw *redactingWriter) Write(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := io.WriteString(rw.w, rw.r.Redact(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
