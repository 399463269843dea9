// Package render draws the plugin's tables and bars. Everything here is a
// pure function of its input (and of whether colour is on), so the tables
// are golden files.
package render

import (
	"strings"
	"unicode/utf8"
)

// Palette colours text; the zero Palette leaves it plain. Colour is only
// for a terminal (see cli: NO_COLOR, a pipe or a file turn it off).
type Palette struct{ On bool }

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

func (p Palette) wrap(code, s string) string {
	if !p.On || s == "" {
		return s
	}
	return code + s + ansiReset
}

// Bold, Red, Green, Yellow and Dim colour s when the palette is on.
func (p Palette) Bold(s string) string   { return p.wrap(ansiBold, s) }
func (p Palette) Red(s string) string    { return p.wrap(ansiRed, s) }
func (p Palette) Green(s string) string  { return p.wrap(ansiGreen, s) }
func (p Palette) Yellow(s string) string { return p.wrap(ansiYellow, s) }
func (p Palette) Dim(s string) string    { return p.wrap(ansiDim, s) }

// Clean makes text from the cluster safe to print on a terminal: control
// characters (an escape sequence in a rejection reason, a Job annotation
// or a runner's error could clear the screen or rewrite what is shown) are
// replaced by '?', and newlines by spaces. Everything the plugin prints
// that a user or a tenant could have written goes through it.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '?'
		}
		return r
	}, s)
}

// CleanLines is Clean that keeps the line breaks, for messages of several
// lines (the errors of several flags).
func CleanLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Clean(l)
	}
	return strings.Join(lines, "\n")
}

// Table is rows of cells under a header, columns padded to their widest
// cell (colour codes do not count), numbers right-aligned.
type Table struct {
	Header []string
	// Right marks the right-aligned columns.
	Right []bool
	Rows  [][]string
}

// visible is the width of s on a terminal: its runes, without ANSI codes.
func visible(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}

// Truncate cuts s to at most n visible runes (ANSI colour codes do not
// count and are kept whole), closing any colour it cut into. A live
// display redraws by moving the cursor up one row per line, so a line
// wider than the terminal, which wraps onto two rows, would leave copies
// behind.
func Truncate(s string, n int) string {
	if n <= 0 || visible(s) <= n {
		return s
	}
	var b strings.Builder
	seen := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := i
			for j < len(s) && s[j] != 'm' {
				j++
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j + 1
			continue
		}
		if seen == n-1 {
			b.WriteString("…" + ansiReset)
			return b.String()
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		i += size
		seen++
	}
	return b.String()
}

// String renders the table, columns three spaces apart, no trailing
// spaces.
func (t Table) String() string {
	widths := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.Rows...)
	for _, r := range all {
		for i, c := range r {
			if i < len(widths) && visible(c) > widths[i] {
				widths[i] = visible(c)
			}
		}
	}
	var b strings.Builder
	for _, r := range all {
		var line strings.Builder
		for i := range widths {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", widths[i]-visible(c))
			if i > 0 {
				line.WriteString("   ")
			}
			if i < len(t.Right) && t.Right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
