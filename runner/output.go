package runner

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// emit writes the result everywhere it is wanted: the result file
// (always, even on failure, because Argo collects output files whatever the
// exit code), the termination message, and stdout (as a table, JSON or CSV,
// and as a record frame with --emit-record).
//
// The files come first: stdout may be a pipe whose reader has gone (the
// write fails with EPIPE; SIGPIPE is caught, see cmd/runner) or that
// blocks, and neither may keep the outcome from the places that record it.
// A place that cannot be written is logged, and the others are still
// written.
//
// Secret values are removed from the result's values before it is encoded
// (redactResult), never from the encoded bytes: replacing a secret such as
// "kafka" or "2026" inside JSON would mangle the schema name and timestamps
// and make the result undecodable, and inside a frame it would break the
// base64.
func emit(cfg *config.Config, res *report.Result, stdout io.Writer, log *slog.Logger, red *config.Redactor) {
	redactResult(res, red)
	output, record := config.OutputTable, false
	if cfg != nil {
		output, record = cfg.Output, cfg.EmitRecord
	}
	full, err := writeRecorded(cfg, res)
	if err != nil {
		log.Error("cannot write the result", "error", config.FieldNamesFlags.Expand(err.Error()))
	}
	switch output {
	case config.OutputJSON:
		// The indented JSON is encoded only where it is written: for a
		// table on stdout and no result file it was a third of the
		// writing's CPU (about 0.7 ms at 1,000 partitions), for nothing.
		if full == nil {
			if full, err = report.Marshal(res); err != nil {
				log.Error("cannot encode the result", "error", err.Error())
				return
			}
		}
		_, err = stdout.Write(full)
	case config.OutputCSV:
		err = writeCSV(stdout, res)
	default:
		err = writeTable(stdout, res)
	}
	if err != nil {
		log.Error("cannot write the result to stdout", "output", output, "error", err.Error())
	}
	if record {
		// After the human or jq output, as one write: the launcher finds it
		// in the pod log whatever else the log holds.
		if err := report.WriteFrame(stdout, res); err != nil {
			log.Error("cannot write the record frame", "error", err.Error())
		}
	}
}

// writeRecorded writes res (redacted already) to the result file and the
// termination message, each that is configured, and returns the result
// file's JSON (nil without a result file). Its error names the setting of
// each place that could not be written (a config.Ref); outside a pod, the
// default termination message path does not exist, which is normal.
func writeRecorded(cfg *config.Config, res *report.Result) ([]byte, error) {
	return writePlaces(cfg, func() ([]byte, error) { return report.Marshal(res) },
		func(limit int) ([]byte, error) { return report.Compact(res, limit) })
}

// writePlaces writes a result, full and compact (by the given encoders),
// to the result file and the termination message: writeRecorded, for a
// result of either schema.
func writePlaces(cfg *config.Config, marshal func() ([]byte, error), compact func(limit int) ([]byte, error)) ([]byte, error) {
	resultFile, termPath := "", config.DefaultTerminationMessagePath
	if cfg != nil {
		resultFile, termPath = cfg.ResultFile, cfg.TerminationMessagePath
	}
	var full []byte
	var errs []error
	if resultFile != "" {
		var err error
		if full, err = marshal(); err == nil {
			err = writeFileAtomic(resultFile, full)
		}
		if err != nil {
			errs = append(errs, &placeError{config.Ref(config.FlagResultFile), err})
		}
	}
	if termPath != "" {
		b, err := compact(report.MaxTerminationMessageBytes)
		if err == nil {
			err = writeTerminationMessage(termPath, b)
		}
		outsidePod := termPath == config.DefaultTerminationMessagePath && os.IsNotExist(err)
		if err != nil && !outsidePod {
			errs = append(errs, &placeError{config.EnvTerminationMessagePath, err})
		}
	}
	return full, errors.Join(errs...)
}

// placeError is a place the result could not be written to, by the
// setting that names it.
type placeError struct {
	setting string
	err     error
}

func (e *placeError) Error() string { return e.setting + ": " + e.err.Error() }
func (e *placeError) Unwrap() error { return e.err }

func writeTerminationMessage(path string, b []byte) error {
	// The kubelet provides the file; never create one elsewhere by accident
	// at the default path.
	flags := os.O_WRONLY | os.O_TRUNC
	if path != config.DefaultTerminationMessagePath {
		flags |= os.O_CREATE
	}
	return writeFlags(path, b, flags)
}

// writeFlags writes b to path, opened with flags.
func writeFlags(path string, b []byte, flags int) error {
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
// container) never sees half a result. A path that exists and is not a
// regular file (/dev/stdout, a FIFO, a device) is written in place: renaming
// over it would replace the device or the link itself.
func writeFileAtomic(path string, b []byte) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		return writeFlags(path, b, os.O_WRONLY|os.O_TRUNC)
	}
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

// writeCSV writes the plan's new offsets the way kafka-consumer-groups.sh
// --reset-offsets --export writes several groups' (group,topic,partition,
// offset, no header), which its --from-file and the runner's file: target
// read. The group column is there although the runner moves one group, so
// that neither tool applies the file to another group: Kafka's finds no
// rows for it, the runner refuses it.
//
// It writes only what the group is, or in a dry run would be, left at: the
// partitions of a run that ended well, without those an undo left alone.
// A failed or refused run writes nothing, so that a refused plan is never
// handed on as one; the log and the exit code say why.
func writeCSV(w io.Writer, res *report.Result) error {
	if res.ExitCode != report.ExitOK {
		return nil
	}
	cw := csv.NewWriter(w) // buffered; Flush writes it out
	rec := make([]string, 4)
	for i := range res.Partitions {
		p := &res.Partitions[i]
		if p.Error != "" || p.LeftAlone != "" {
			continue
		}
		rec[0], rec[1] = res.Group, p.Topic
		rec[2] = strconv.FormatInt(int64(p.Partition), 10)
		rec[3] = strconv.FormatInt(p.NewOffset, 10)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeTable prints the plan or outcome the way kafka-consumer-groups.sh
// does, plus the delta and any note.
func writeTable(w io.Writer, res *report.Result) error {
	// tabwriter hands every cell and padding run to w on its own: written
	// straight to stdout, a 1,000-partition table was some 18,000 write
	// system calls, a tenth of the run's CPU.
	bw := bufio.NewWriterSize(w, 64<<10)
	w = bw
	mode := "APPLIED"
	switch {
	case res.ExitCode == report.ExitRefused:
		// A dry run too: it says what the real run would do.
		mode = "REFUSED: " + string(res.Reason) + " (nothing committed)"
		if res.DryRun {
			mode = "DRY RUN " + mode
		}
	case res.DryRun:
		mode = "DRY RUN (nothing committed)"
	case res.AlreadyApplied:
		mode = "ALREADY APPLIED (nothing committed again)"
	case res.ExitCode != report.ExitOK:
		mode = "FAILED: " + string(res.Reason)
	}
	if res.Plan != "" {
		mode += "  PLAN " + res.Plan
	}
	group := res.Group
	if res.GroupType != "" {
		group += " (" + res.GroupType + ")"
	}
	_, _ = fmt.Fprintf(w, "GROUP %s  TARGET %s  RUN %s  %s\n", group, targetLine(res.Target), res.RunID, mode)
	if len(res.Partitions) > 0 {
		writePartitions(w, res.Partitions)
	}
	t := res.Totals
	_, _ = fmt.Fprintf(w, "TOTAL %d partition(s), %d message(s) to re-consume, %d skipped", t.Partitions, t.MessagesToReconsume, t.MessagesSkipped)
	if t.Clamped > 0 {
		_, _ = fmt.Fprintf(w, ", %d clamped", t.Clamped)
	}
	if t.NoPreviousOffset > 0 {
		_, _ = fmt.Fprintf(w, ", %d without a previous offset", t.NoPreviousOffset)
	}
	if t.LeftAlone > 0 {
		_, _ = fmt.Fprintf(w, ", %d left alone", t.LeftAlone)
	}
	if t.Failed > 0 {
		_, _ = fmt.Fprintf(w, ", %d FAILED", t.Failed)
	}
	_, _ = fmt.Fprintln(w)
	if res.Error != "" {
		_, _ = fmt.Fprintf(w, "ERROR (exit %d, %s): %s\n", res.ExitCode, res.Reason, res.Error)
	}
	// The buffer keeps its first write error and returns it here.
	return bw.Flush()
}

// tableHeader names the table's columns. Every column but the last is
// aligned; the last, NOTE, is free text.
var tableHeader = [tableColumns + 1]string{"TOPIC", "PARTITION", "PREVIOUS", "NEW", "DELTA", "LOG-START", "LOG-END", "NOTE"}

// tableColumns is the number of aligned columns.
const tableColumns = 7

// tablePadding is the spaces after a column's widest cell.
const tablePadding = 2

// writePartitions writes the table's header and rows, aligned as
// text/tabwriter (minwidth 0, padding 2, spaces) aligns them: each column as
// wide as its widest cell plus the padding, the note after the last column
// as it is. It measures the columns first and then writes each row once,
// instead of letting tabwriter keep every cell of the table until its
// Flush: at 1,000 partitions some 700 allocations (in one profile their
// garbage started a GC cycle during the writing, the run's last step), at
// 10,000 partitions 3.5 MiB. A cell that tabwriter would read as more than text (a tab, a line
// break, \v, \f, its escape byte 0xff) could only come from a note or an
// error, and sends the table through tabwriter itself, so that the output
// stays byte for byte the same.
func writePartitions(w io.Writer, ps []report.Partition) {
	var width [tableColumns]int
	for j := range width {
		width[j] = len(tableHeader[j])
	}
	var scratch [24]byte
	for i := range ps {
		p := &ps[i]
		if !plainCell(p.Topic) || !plainCell(p.Note) || !plainCell(p.Error) || !plainCell(p.LeftAlone) {
			writePartitionsTabwriter(w, ps)
			return
		}
		for j := range width {
			cw := len(appendCell(scratch[:0], p, j))
			if j == 0 {
				cw = utf8.RuneCountInString(p.Topic) // tabwriter counts runes
			}
			width[j] = max(width[j], cw)
		}
	}
	pad := func(b []byte, n int) []byte {
		for range n {
			b = append(b, ' ')
		}
		return b
	}
	var row []byte
	for j := range width {
		row = pad(append(row, tableHeader[j]...), width[j]+tablePadding-len(tableHeader[j]))
	}
	row = append(append(row, tableHeader[tableColumns]...), '\n')
	_, _ = w.Write(row)
	for i := range ps {
		p := &ps[i]
		row = row[:0]
		for j := range width {
			n := len(row)
			row = appendCell(row, p, j)
			cw := len(row) - n
			if j == 0 {
				cw = utf8.RuneCountInString(p.Topic)
			}
			row = pad(row, width[j]+tablePadding-cw)
		}
		row = append(append(row, partitionNote(p)...), '\n')
		_, _ = w.Write(row)
	}
}

// writePartitionsTabwriter is writePartitions through text/tabwriter.
func writePartitionsTabwriter(w io.Writer, ps []report.Partition) {
	tw := tabwriter.NewWriter(w, 0, 4, tablePadding, ' ', 0)
	var row []byte
	for j := range tableColumns {
		row = append(append(row, tableHeader[j]...), '\t')
	}
	row = append(append(row, tableHeader[tableColumns]...), '\n')
	_, _ = tw.Write(row)
	for i := range ps {
		p := &ps[i]
		row = row[:0]
		for j := range tableColumns {
			row = append(appendCell(row, p, j), '\t')
		}
		row = append(append(row, partitionNote(p)...), '\n')
		_, _ = tw.Write(row)
	}
	_ = tw.Flush()
}

// plainCell says whether tabwriter would take s as plain text.
func plainCell(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\v', '\f', tabwriter.Escape:
			return false
		}
	}
	return true
}

// appendCell appends the text of p's cell in aligned column j.
func appendCell(b []byte, p *report.Partition, j int) []byte {
	switch j {
	case 0:
		return append(b, p.Topic...)
	case 1:
		return strconv.AppendInt(b, int64(p.Partition), 10)
	case 2:
		return appendOptInt(b, p.PreviousOffset, false)
	case 3:
		return strconv.AppendInt(b, p.NewOffset, 10)
	case 4:
		return appendOptInt(b, p.Delta, true)
	case 5:
		return strconv.AppendInt(b, p.LogStartOffset, 10)
	default:
		return strconv.AppendInt(b, p.LogEndOffset, 10)
	}
}

// partitionNote is the table's NOTE for p: its error, what left it alone,
// and its note.
func partitionNote(p *report.Partition) string {
	note := p.Note
	if p.LeftAlone != "" {
		note = strings.TrimSpace("LEFT ALONE: " + p.LeftAlone + " " + note)
	}
	if p.Error != "" {
		note = strings.TrimSpace("ERROR: " + p.Error + " " + note)
	}
	return note
}

func targetLine(t report.Target) string {
	if t.Resolved == "" || t.Resolved == t.Given {
		return t.Given
	}
	return t.Resolved + " (given " + t.Given + ")"
}

// appendOptInt appends *p in decimal, "-" for nil; with sign, a positive
// value gets a "+" (a delta).
func appendOptInt(b []byte, p *int64, sign bool) []byte {
	if p == nil {
		return append(b, '-')
	}
	if sign && *p > 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, *p, 10)
}

// keptFields are, by JSON name, the result's identifiers and its fixed
// vocabulary: the identifiers come from the request itself (which is no
// secret), and redacting them would make the result name another group,
// topic or run; the schema and the reason are constants every reader keys
// on. Every other string in the result is free text (errors, notes,
// warnings) that may quote a Kafka error, and is redacted.
var keptFields = map[string]bool{"schema": true, "reason": true, "group": true, "runId": true, "topic": true, "given": true, "resolved": true,
	// A run over several groups' names of groups (report.MultiResult).
	"selected": true, "notAttempted": true}

// redactResult removes secret values from every free-text string in res, in
// place, by walking its fields: a field added to the result later is redacted
// without anyone remembering to.
func redactResult(res *report.Result, red *config.Redactor) {
	if res == nil || red == nil {
		return
	}
	redactValue(reflect.ValueOf(res).Elem(), red)
}

// redactValueOf is redactResult for a result of any schema (a pointer).
func redactValueOf(res any, red *config.Redactor) {
	if res == nil || red == nil {
		return
	}
	redactValue(reflect.ValueOf(res).Elem(), red)
}

func redactValue(v reflect.Value, red *config.Redactor) {
	switch v.Kind() {
	case reflect.String:
		// Redact("") is "": an empty note or error (most of a large
		// result's strings) needs no work.
		if s := v.String(); s != "" && v.CanSet() {
			v.SetString(red.Redact(s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactValue(v.Elem(), red)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			redactValue(v.Index(i), red)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if e := v.MapIndex(k); e.Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf(red.Redact(e.String())).Convert(e.Type()))
			}
		}
	case reflect.Struct:
		for _, i := range redactedFields(v.Type()) {
			redactValue(v.Field(i), red)
		}
	}
}

// redactedFieldsOf caches redactedFields: reading every field's tag again
// for each of a large result's partitions was a quarter of the writing's
// CPU.
var redactedFieldsOf sync.Map // reflect.Type -> []int

// redactedFields are the indices of t's fields that redactValue walks: the
// exported ones whose JSON name is not a kept field.
func redactedFields(t reflect.Type) []int {
	if f, ok := redactedFieldsOf.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && !keptFields[name] {
			idx = append(idx, i)
		}
	}
	redactedFieldsOf.Store(t, idx)
	return idx
}

// redactingHandler removes secret values from log records before they are
// formatted: from the message and from every attribute value, librdkafka's
// own lines included. Redacting the formatted line instead would corrupt it
// when a secret equals a key such as "level" or "msg".
type redactingHandler struct {
	slog.Handler
	r *config.Redactor
}

func newRedactingHandler(h slog.Handler, r *config.Redactor) slog.Handler {
	if r == nil {
		return h
	}
	return &redactingHandler{Handler: h, r: r}
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redactingHandler{Handler: h.Handler.WithAttrs(red), r: h.r}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{Handler: h.Handler.WithGroup(name), r: h.r}
}

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		// Errors and Stringers are formatted as text anyway.
		return slog.String(a.Key, h.r.Redact(fmt.Sprint(v.Any())))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
