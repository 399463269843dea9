package render

import "strings"

// BarWidth is the width of a partition's bar, brackets included.
const BarWidth = 32

// Bar draws one partition's log from its start to its end, where the group
// was (o) and where it went: back (<) over the messages it consumes again
// (=), or forward (>) past the ones it skips (-, red). "*" is both in one
// place (nothing moved). Without a previous offset only the new one (^)
// shows. Offsets outside the log are drawn at its edge.
//
//	[.......<=======o..............]   re-consumes
//	[...............o------>.......]   skips
func Bar(p Palette, width int, logStart, logEnd int64, was *int64, now int64) string {
	inner := width - 2
	if inner < 3 {
		inner = 3
	}
	if logEnd < logStart {
		logStart, logEnd = logEnd, logStart
	}
	col := func(o int64) int {
		if logEnd == logStart {
			if o >= logEnd {
				return inner - 1
			}
			return 0
		}
		o = min(max(o, logStart), logEnd)
		return int((o - logStart) * int64(inner-1) / (logEnd - logStart))
	}
	cells := make([]string, inner)
	for i := range cells {
		cells[i] = p.Dim(".")
	}
	n := col(now)
	if was == nil {
		cells[n] = p.Bold("^")
		return "[" + strings.Join(cells, "") + "]"
	}
	w := col(*was)
	switch {
	case *was == now || w == n && *was > now:
		// Nothing moved, or a move smaller than one cell: say which.
		cells[n] = p.Bold("*")
		if *was > now {
			cells[n] = p.Yellow("<")
		}
	case w == n:
		cells[n] = p.Red(">")
	case n < w:
		for i := n + 1; i < w; i++ {
			cells[i] = p.Yellow("=")
		}
		cells[n], cells[w] = p.Yellow("<"), p.Bold("o")
	default:
		for i := w + 1; i < n; i++ {
			cells[i] = p.Red("-")
		}
		cells[w], cells[n] = p.Bold("o"), p.Red(">")
	}
	return "[" + strings.Join(cells, "") + "]"
}
