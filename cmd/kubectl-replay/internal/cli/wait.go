package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/progress"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"
	"github.com/kafka-replay/kafka-replay/launcher/replay"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// follow watches a request until it is done (finished, its consumers
// restored), showing its steps, then prints the outcome. On a terminal the
// steps are redrawn in place; elsewhere (a pipe, a CI log) each change is a
// line of its own.
func (a *app) follow(ctx context.Context, ns, name string, timeout time.Duration) error {
	cur, err := a.watchUntil(ctx, ns, name, timeout, progress.Over, a.streams.Out)
	if err != nil {
		return err
	}
	return a.outcome(cur)
}

// watchUntil watches a request, showing its steps on out, until done
// holds for it, and returns it as it then is.
func (a *app) watchUntil(ctx context.Context, ns, name string, timeout time.Duration, done func(*v1alpha1.ReplayRequest) bool, out io.Writer) (*v1alpha1.ReplayRequest, error) {
	c, _, err := a.client()
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errTimeout)
		defer cancel()
	}
	d := newDisplay(out, isTerminal(out), palette(out))
	key := client.ObjectKey{Namespace: ns, Name: name}
	started := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()

	// follow starts right after the request was created or annotated, so
	// not finding it means it was deleted meanwhile.
	deleted := exit.Errorf(exit.Failed, "replayrequest %q was deleted before it finished", name)
	var cur v1alpha1.ReplayRequest
	if err := c.Get(ctx, key, &cur); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, deleted
		}
		return nil, waitErr(ctx, apiError(err))
	}
	d.show(&cur, time.Since(started))
	for !done(&cur) {
		w, err := c.Watch(ctx, &v1alpha1.ReplayRequestList{}, client.InNamespace(ns),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: cur.ResourceVersion}})
		if err != nil {
			if ctx.Err() != nil {
				return nil, waitErr(ctx, err)
			}
			// A watch from a compacted resourceVersion: read it again.
			if err := c.Get(ctx, key, &cur); err != nil {
				if apierrors.IsNotFound(err) {
					return nil, deleted
				}
				return nil, waitErr(ctx, apiError(err))
			}
			continue
		}
		gone, stale, err := a.drain(ctx, w, &cur, done, d, started, tick.C)
		w.Stop()
		if err != nil {
			return nil, waitErr(ctx, err)
		}
		if gone {
			return nil, deleted
		}
		if stale {
			// The watch's resourceVersion is too old (410 Gone): read the
			// request again and watch from there, or the next watch fails
			// the same way.
			if err := c.Get(ctx, key, &cur); err != nil {
				if apierrors.IsNotFound(err) {
					return nil, deleted
				}
				return nil, waitErr(ctx, apiError(err))
			}
			d.show(&cur, time.Since(started))
		}
	}
	d.show(&cur, time.Since(started))
	return &cur, nil
}

var errTimeout = errors.New("--timeout ran out")

// waitErr says why following stopped.
func waitErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errTimeout):
		return exit.Errorf(exit.Timeout, "--timeout ran out before the request finished; it goes on (kubectl replay describe to see it)")
	case ctx.Err() != nil:
		return exit.Errorf(exit.Interrupted, "interrupted; the request goes on (kubectl replay describe to see it)")
	}
	return err
}

// drain reads one watch until it closes (re-watch from the last version
// seen), fails (stale: read again), or the request is done or deleted.
func (a *app) drain(ctx context.Context, w watch.Interface, cur *v1alpha1.ReplayRequest, done func(*v1alpha1.ReplayRequest) bool, d *display, started time.Time, tick <-chan time.Time) (gone, stale bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, false, ctx.Err()
		case <-tick:
			d.show(cur, time.Since(started))
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return true, false, nil
			case watch.Error:
				return false, true, nil
			case watch.Added, watch.Modified:
				if rr, ok := ev.Object.(*v1alpha1.ReplayRequest); ok {
					*cur = *rr
					d.show(cur, time.Since(started))
					if done(cur) {
						return false, false, nil
					}
				}
			}
		}
	}
}

// outcome prints how the request ended and returns its exit code.
func (a *app) outcome(rr *v1alpha1.ReplayRequest) error {
	p := palette(a.streams.Out)
	_, succeeded := progress.Finished(rr)
	reason, msg := progress.Outcome(rr)
	if replay.IsParent(rr) {
		return a.parentOutcome(p, rr, succeeded, reason, msg)
	}
	if !succeeded {
		return exit.Errorf(exit.Failed, "replayrequest %s failed: %s: %s", rr.Name, render.Clean(reason), oneLine(request.InPluginWords(msg), 4096))
	}
	fmt.Fprintf(a.streams.Out, "%s %s: %s\n", p.Green("succeeded"), render.Clean(reason), oneLine(request.InPluginWords(msg), 4096))
	if r := rr.Status.Result; r != nil {
		fmt.Fprintf(a.streams.Out, "%d partitions, %d messages re-consumed, %d skipped\n", r.Totals.Partitions, r.Totals.MessagesToReconsume, r.Totals.MessagesSkipped)
	}
	if rr.Status.UndoCommand != "" {
		fmt.Fprintf(a.streams.Out, "undo with: %s\n", render.ReplayCommand("undo", rr.Name, rr.Namespace))
	}
	return nil
}

// parentOutcome prints how a request over several groups ended: one row
// per group, the overall reason, and the exit code of the whole: a
// failed group fails it.
func (a *app) parentOutcome(p render.Palette, rr *v1alpha1.ReplayRequest, succeeded bool, reason, msg string) error {
	rows := GroupRows(rr)
	fmt.Fprintf(a.streams.Out, "\n%s\n", render.Tally(rows))
	fmt.Fprint(a.streams.Out, render.GroupTable(p, rows))
	if !succeeded {
		return exit.Errorf(exit.Failed, "replayrequest %s failed: %s: %s", rr.Name, render.Clean(reason), oneLine(request.InPluginWords(msg), 4096))
	}
	fmt.Fprintf(a.streams.Out, "%s %s: %s\n", p.Green("succeeded"), render.Clean(reason), oneLine(request.InPluginWords(msg), 4096))
	if rr.Status.UndoCommand != "" {
		fmt.Fprintf(a.streams.Out, "undo with: %s\n", render.ReplayCommand("undo", rr.Name, rr.Namespace))
	}
	return nil
}

// display draws the steps.
type display struct {
	w     io.Writer
	live  bool
	p     render.Palette
	lines int               // lines drawn last time (live)
	last  map[string]string // step → what was printed (not live)
}

func newDisplay(w io.Writer, live bool, p render.Palette) *display {
	return &display{w: w, live: live, p: p, last: map[string]string{}}
}

// Lines is the display of a request: a header and one line per step.
func Lines(p render.Palette, rr *v1alpha1.ReplayRequest, elapsed time.Duration) []string {
	phase := string(rr.Status.Phase)
	if phase == "" {
		phase = "Pending"
	}
	out := []string{fmt.Sprintf("replayrequest %s/%s  group %s  %s  %s", rr.Namespace, rr.Name, oneLine(replay.Group(rr), 255), p.Bold(render.Clean(phase)), elapsed.Truncate(time.Second))}
	for _, s := range progress.Steps(rr) {
		mark := s.State.Symbol()
		switch s.State {
		case progress.Done:
			mark = p.Green(mark)
		case progress.Failed:
			mark = p.Red(mark)
		case progress.Active:
			mark = p.Yellow(mark)
		}
		line := fmt.Sprintf("  %s %-17s %s", mark, s.Name, oneLine(request.InPluginWords(s.Detail), 110))
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}

func oneLine(s string, n int) string {
	s = render.Clean(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// width is the terminal's width now (it may be resized), 0 if unknown.
func (d *display) width() int {
	f, ok := d.w.(*os.File)
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

func (d *display) show(rr *v1alpha1.ReplayRequest, elapsed time.Duration) {
	if replay.IsParent(rr) && !d.live {
		d.showGroups(rr)
		return
	}
	if d.live {
		lines := Lines(d.p, rr, elapsed)
		if replay.IsParent(rr) {
			lines = ParentLines(d.p, rr, elapsed, maxLiveGroups)
		}
		if w := d.width(); w > 0 {
			for i := range lines {
				lines[i] = render.Truncate(lines[i], w-1)
			}
		}
		var b strings.Builder
		if d.lines > 0 {
			fmt.Fprintf(&b, "\x1b[%dA", d.lines) // back to the block's first line
		}
		for _, l := range lines {
			b.WriteString("\r\x1b[2K" + l + "\n")
		}
		b.WriteString("\x1b[J") // a shorter block leaves nothing below
		_, _ = io.WriteString(d.w, b.String())
		d.lines = len(lines)
		return
	}
	// Not a terminal: a line per change of a step, with the time.
	for _, s := range progress.Steps(rr) {
		text := fmt.Sprintf("%s %s", s.State.Symbol(), s.Detail)
		if s.State == progress.Pending || d.last[s.Name] == text {
			continue
		}
		d.last[s.Name] = text
		fmt.Fprintf(d.w, "%s %-17s %s %s\n", time.Now().UTC().Format("15:04:05"), s.Name, s.State.Symbol(), oneLine(request.InPluginWords(s.Detail), 200))
	}
}

// showGroups is a parent's display off a terminal: a line per change of a
// group's row, with the time, and one when its plan awaits approval.
func (d *display) showGroups(rr *v1alpha1.ReplayRequest) {
	now := time.Now().UTC().Format("15:04:05")
	if rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil && d.last[progress.StepApproval] != rr.Status.Plan.Digest {
		d.last[progress.StepApproval] = rr.Status.Plan.Digest
		fmt.Fprintf(d.w, "%s %-17s %s waiting: %s, then %s\n", now, progress.StepApproval, progress.Active.Symbol(),
			render.ReplayCommand("plan", rr.Name, rr.Namespace), render.ReplayCommand("approve", rr.Name, rr.Namespace))
	}
	for _, r := range GroupRows(rr) {
		line := groupLine(render.Palette{}, r)
		if d.last["group/"+r.Group] == line {
			continue
		}
		d.last["group/"+r.Group] = line
		fmt.Fprintf(d.w, "%s %s\n", now, line)
	}
}
