package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A frame carries one complete result through a channel that only passes
// lines of text and may mix them with other lines: the container log, read
// back by the launcher through pods/log. The termination message holds 4 KiB,
// which is a few dozen partitions; a frame holds all of them, so the runner
// needs no Kubernetes API access to hand over its full record.
//
// The format is line based, every line starting with [FrameMarker]:
//
//	kafka-replay/record begin schema=<Schema> bytes=<N> lines=<L> sha256=<hex>
//	kafka-replay/record 1 <base64>
//	...
//	kafka-replay/record <L> <base64>
//	kafka-replay/record end sha256=<hex>
//
// The payload is the result as compact JSON, gzip-compressed, base64-encoded
// and cut into lines of [frameLineChars] characters. bytes and sha256 describe
// the JSON itself, so a reader checks what it finally decodes, not just the
// transport. The numbered lines let a reader tell a dropped or reordered line
// from a complete frame, and the marker lets it skip lines of other output
// (the runner's logs on stderr land in the same pod log) and any prefix a log
// pipeline adds in front (kubectl --timestamps, the CRI log file format).
// Short lines stay far below every log line limit (the CRI splits lines at
// 16 KiB).

// FrameMarker starts every line of a frame.
const FrameMarker = "kafka-replay/record "

// MaxFrameBytes bounds the JSON a frame may carry. A 10,000-partition result
// is a few MiB; the bound keeps a reader's memory finite whatever the log
// holds (a frame announcing more is counted as damaged, never decompressed).
const MaxFrameBytes = 64 << 20

// frameLineChars is the base64 width of a frame line, as in MIME.
const frameLineChars = 76

// maxLogLineBytes is the longest log line a reader looks at. Frame lines are
// about a hundred bytes; longer lines are other output and are skipped.
const maxLogLineBytes = 4096

// WriteFrame writes r as one framed, checksummed record block (short lines,
// safe for container log line limits). The whole frame is produced first and
// written with a single Write, so nothing the caller writes to w in between
// can land inside it.
func WriteFrame(w io.Writer, r *Result) error {
	js, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record frame: %w", err)
	}
	if len(js) > MaxFrameBytes {
		return fmt.Errorf("record frame: result is %d bytes, more than %d", len(js), MaxFrameBytes)
	}
	var gz bytes.Buffer
	// The default level, not the best: at 10,000 partitions the best took
	// about 15 ms of the runner's CPU for a frame some 7% smaller (28 KB
	// against 30 KB of base64's input); the reader decompresses either.
	zw, err := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(js); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	b64 := base64.StdEncoding.EncodeToString(gz.Bytes())
	lines := (len(b64) + frameLineChars - 1) / frameLineChars
	sum := sha256.Sum256(js)
	digest := hex.EncodeToString(sum[:])

	var out bytes.Buffer
	out.Grow(len(b64) + lines*(len(FrameMarker)+8) + 256)
	fmt.Fprintf(&out, "%sbegin schema=%s bytes=%d lines=%d sha256=%s\n", FrameMarker, Schema, len(js), lines, digest)
	for i := 0; i < lines; i++ {
		end := min((i+1)*frameLineChars, len(b64))
		fmt.Fprintf(&out, "%s%d %s\n", FrameMarker, i+1, b64[i*frameLineChars:end])
	}
	fmt.Fprintf(&out, "%send sha256=%s\n", FrameMarker, digest)
	_, err = w.Write(out.Bytes())
	return err
}

// ReadFrames scans a pod log (stdout and stderr interleaved, possibly with
// CRI/kubectl timestamps absent) and returns every intact frame's result in
// order, plus how many frames were damaged or cut. Lines without the marker
// are ignored. A frame is damaged when a line is missing, out of order or
// altered, when it ends early (the log was cut, or another frame begins), or
// when its beginning is missing. err is only the reader's own error; what was
// read up to it is still returned.
//
// The same log read twice yields the same frame twice; callers that want one
// result per container take the last.
func ReadFrames(log io.Reader) (results []*Result, damaged int, err error) {
	var (
		cur    *frameState
		orphan bool // body or end lines seen outside a frame
	)
	br := bufio.NewReaderSize(log, maxLogLineBytes)
	for {
		line, rerr := readLine(br)
		if line != nil {
			if i := bytes.Index(line, []byte(FrameMarker)); i >= 0 {
				rest := string(bytes.TrimRight(line[i+len(FrameMarker):], "\r"))
				kind, arg, _ := strings.Cut(rest, " ")
				switch kind {
				case "begin":
					if cur != nil || orphan {
						damaged++
					}
					orphan = false
					cur = parseFrameHeader(arg)
				case "end":
					switch {
					case cur != nil:
						if r := cur.finish(arg); r != nil {
							results = append(results, r)
						} else {
							damaged++
						}
						cur = nil
					case orphan:
						damaged++
						orphan = false
					}
				default:
					// Only a number makes a body line; anything else is a
					// log line that merely mentions the marker.
					seq, err := strconv.Atoi(kind)
					switch {
					case err != nil || seq < 1:
					case cur == nil:
						orphan = true
					default:
						cur.add(seq, arg)
					}
				}
			}
		}
		if rerr != nil {
			if cur != nil || orphan {
				damaged++
			}
			if errors.Is(rerr, io.EOF) {
				rerr = nil
			}
			return results, damaged, rerr
		}
	}
}

// IsFrameLine reports whether a log line is (or mentions) a frame line, so
// that a reader showing the log's end to people can leave frames out: a
// frame is thousands of lines of base64.
func IsFrameLine(line string) bool { return strings.Contains(line, FrameMarker) }

// readLine returns the next line without its newline. A line longer than the
// reader's buffer is not a frame line: it is returned as an empty line so the
// caller skips it, and the rest of it is discarded.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		return []byte{}, err
	}
	if len(line) == 0 && err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}

// frameState is a frame being read. broken is set at the first fault; the
// frame is then read to its end and counted once as damaged.
type frameState struct {
	size   int
	lines  int
	digest string
	next   int
	body   strings.Builder
	broken bool
}

func parseFrameHeader(arg string) *frameState {
	f := &frameState{next: 1, size: -1, lines: -1}
	schema := ""
	for _, kv := range strings.Fields(arg) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "schema":
			schema = v
		case "bytes":
			f.size = atoiOr(v, -1)
		case "lines":
			f.lines = atoiOr(v, -1)
		case "sha256":
			f.digest = v
		}
	}
	maxLines := base64.StdEncoding.EncodedLen(MaxFrameBytes)/frameLineChars + 1
	if schema != Schema || f.size < 0 || f.size > MaxFrameBytes || f.lines < 1 || f.lines > maxLines || len(f.digest) != sha256.Size*2 {
		f.broken = true
	}
	return f
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

func (f *frameState) add(seq int, chunk string) {
	if f.broken {
		return
	}
	if seq != f.next || f.next > f.lines || len(chunk) == 0 || len(chunk) > frameLineChars {
		f.broken = true
		return
	}
	f.next++
	f.body.WriteString(chunk)
}

// finish checks and decodes a complete frame; nil means damaged.
func (f *frameState) finish(endArg string) *Result {
	if f.broken || f.next != f.lines+1 || strings.TrimSpace(endArg) != "sha256="+f.digest {
		return nil
	}
	gz, err := base64.StdEncoding.DecodeString(f.body.String())
	if err != nil {
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil
	}
	// Read one byte more than announced, so a longer payload is caught
	// without ever holding more than the bound.
	js, err := io.ReadAll(io.LimitReader(zr, int64(f.size)+1))
	if err != nil || len(js) != f.size {
		return nil
	}
	sum := sha256.Sum256(js)
	if hex.EncodeToString(sum[:]) != f.digest {
		return nil
	}
	r, err := Decode(js)
	if err != nil {
		return nil
	}
	return r
}
