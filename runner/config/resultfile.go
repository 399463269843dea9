package config

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Limit is an optional whole-number bound, such as
// --max-messages-to-reconsume: unset (the zero value) means no bound, and 0
// is a bound like any other.
type Limit struct {
	N     int64
	IsSet bool
}

// Decode implements envconfig.Decoder; an empty variable is unset.
func (l *Limit) Decode(v string) error {
	if strings.TrimSpace(v) == "" {
		*l = Limit{}
		return nil
	}
	return l.Set(v)
}

// Set implements flag.Value.
func (l *Limit) Set(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a whole number ≥ 0", v)
	}
	*l = Limit{N: n, IsSet: true}
	return nil
}

func (l *Limit) String() string {
	if l == nil || !l.IsSet {
		return ""
	}
	return strconv.FormatInt(l.N, 10)
}

// Allows reports whether n is within the limit.
func (l Limit) Allows(n int64) bool { return !l.IsSet || n <= l.N }

// FileDigestPrefix starts a --file-digest value.
const FileDigestPrefix = "sha256:"

var fileDigestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// FileDigestOf is the --file-digest of a file's exact bytes.
func FileDigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return FileDigestPrefix + hex.EncodeToString(sum[:])
}

// readTargetFile reads a target's file, bounded, and returns its bytes and
// their digest.
func readTargetFile(kind TargetKind, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	if st.Size() > MaxTargetFileBytes {
		return nil, fmt.Errorf("%s: %s is %d bytes, more than the %d allowed", kind, path, st.Size(), MaxTargetFileBytes)
	}
	// Bounded again while reading: a file may grow after the Stat, and a
	// named pipe has no size.
	b, err := io.ReadAll(io.LimitReader(f, MaxTargetFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", kind, path, err)
	}
	if len(b) > MaxTargetFileBytes {
		return nil, fmt.Errorf("%s: %s is more than the %d bytes allowed", kind, path, MaxTargetFileBytes)
	}
	return b, nil
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// MaxResultFileBytes bounds a plan: or undo: file once decompressed, so a
// small gzip file that expands without end (a gzip bomb) fails fast: a
// 10,000-partition result is about 3 MB.
const MaxResultFileBytes = MaxTargetFileBytes

// DecodeResultFile reads a plan: or undo: file's bytes: a runner result
// (report.Result, the full JSON), gzip-compressed or not. The decompressed
// size is bounded by MaxResultFileBytes.
func DecodeResultFile(b []byte) (*report.Result, error) {
	if bytes.HasPrefix(b, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("is not valid gzip: %w", err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, MaxResultFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("is not valid gzip: %w", err)
		}
		if len(plain) > MaxResultFileBytes {
			return nil, fmt.Errorf("decompresses to more than the %d bytes allowed", MaxResultFileBytes)
		}
		b = plain
	}
	r, err := report.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("is not a runner result (the JSON of --%s or --%s %s): %w", FlagResultFile, FlagOutput, OutputJSON, err)
	}
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"target.time", r.Target.Time}, {"startedAt", &r.StartedAt}, {"finishedAt", &r.FinishedAt}} {
		if f.t != nil {
			if err := CheckZone(*f.t); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	return r, nil
}

// checkResultPartitions checks a result file's partitions as strictly as an
// offsets file's entries.
func checkResultPartitions(r *report.Result) error {
	if r.Truncated {
		return errors.New("is a truncated result (a termination message); give the full result (--" + FlagResultFile + " or --" + FlagOutput + " " + OutputJSON + ")")
	}
	if len(r.Partitions) == 0 {
		return errors.New("lists no partitions")
	}
	offs := make([]PartitionOffset, len(r.Partitions))
	for i, p := range r.Partitions {
		offs[i] = PartitionOffset{Topic: p.Topic, Partition: p.Partition, Offset: p.NewOffset}
		if p.PreviousOffset != nil && *p.PreviousOffset < 0 {
			return fmt.Errorf("entry %d: previousOffset %d is negative", i, *p.PreviousOffset)
		}
	}
	if err := ValidateOffsets(offs, "partitions"); err != nil {
		return err
	}
	return nil
}

// CheckPlanFile checks that r, a plan: file, is a dry run's plan of group,
// unchanged since it was planned (its digest recomputed over its target,
// partitions and the internal topics it deletes: report.Result.Digest).
func CheckPlanFile(r *report.Result, group string) error {
	if !r.DryRun || r.ExitCode != report.ExitOK || r.Reason != report.ReasonDryRun {
		return fmt.Errorf("is not a dry run's plan (dryRun %t, exit %d, reason %s); plan with --%s and give that result", r.DryRun, r.ExitCode, r.Reason, FlagDryRun)
	}
	if r.Group != group {
		return fmt.Errorf("is a plan of group %q, not of %q", r.Group, group)
	}
	if err := checkResultPartitions(r); err != nil {
		return err
	}
	if r.Plan == "" {
		return errors.New("has no plan digest (an older runner's result); plan again")
	}
	if got := r.Digest(); got != r.Plan {
		return fmt.Errorf("its target, partitions and internal topics do not match its plan digest %s (they give %s): the file was edited since it was planned; plan again", r.Plan, got)
	}
	return nil
}

// CheckUndoFile checks that r, an undo: file, is a real run of group that
// succeeded: there is something it applied to undo.
func CheckUndoFile(r *report.Result, group string) error {
	switch {
	case r.DryRun:
		return errors.New("is a dry run's result: it applied nothing to undo")
	case r.ExitCode != report.ExitOK || (r.Reason != report.ReasonApplied && r.Reason != report.ReasonAlreadyApplied):
		return fmt.Errorf("is of a run that ended %s (exit %d), not Applied or AlreadyApplied; only a run that succeeded can be undone", r.Reason, r.ExitCode)
	case r.Group != group:
		return fmt.Errorf("is a run of group %q, not of %q", r.Group, group)
	}
	return checkResultPartitions(r)
}
