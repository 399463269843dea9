// Package exit holds the plugin's exit codes, the one place they are
// defined: `kubectl replay --help` prints Table, and docs/kubectl-replay.md
// lists the same (a test keeps the two equal). They are the plugin's own:
// the runner's exit codes (runner/report) say what a run did, these say
// what a command did, and with --wait how the request ended.
package exit

import (
	"errors"
	"fmt"
	"strings"
)

// Code is the plugin's exit status.
type Code int

const (
	// OK: the command did what it says; with --wait, the request succeeded.
	OK Code = 0
	// Failed: with --wait, the request finished and failed (rejected,
	// expired, refused by a guard, the group active, ...): its reason is
	// printed. See `kubectl replay describe` for what moved, if anything.
	Failed Code = 1
	// Usage: a flag or argument is wrong. Nothing was sent to the API
	// server.
	Usage Code = 2
	// NotFound: the request (or its planning record) does not exist.
	NotFound Code = 3
	// Forbidden: the API server or its admission policies refused you the
	// verb (RBAC: create, get, patch or approve on replayrequests).
	Forbidden Code = 4
	// WrongState: the request is not in a state for this verb: approve or
	// reject of a request not awaiting approval, plan of a request without
	// one, undo of a request that did not apply.
	WrongState Code = 5
	// Timeout: --wait's --timeout ran out before the request finished. The
	// request goes on; follow it again with `kubectl replay describe`.
	Timeout Code = 6
	// APIError: the API server could not be reached or answered an
	// unexpected error (an invalid request it refused, a conflict).
	APIError Code = 7
	// Interrupted: --wait was interrupted (Ctrl-C). The request goes on.
	Interrupted Code = 130
)

// codes is every code with its one-line meaning, in order.
var codes = []struct {
	Code    Code
	Meaning string
}{
	{OK, "the command did what it says; with --wait, the request succeeded"},
	{Failed, "with --wait, the request finished and failed (its reason is printed)"},
	{Usage, "a flag or argument is wrong; nothing was sent"},
	{NotFound, "the request, or the record it needs, does not exist"},
	{Forbidden, "RBAC or an admission policy refused you the verb"},
	{WrongState, "the request is not in a state for this verb (not awaiting approval, did not apply, ...)"},
	{Timeout, "--wait's --timeout ran out; the request goes on"},
	{APIError, "the API server could not be reached or refused the request"},
	{Interrupted, "--wait was interrupted; the request goes on"},
}

// Table is the exit codes as `--help` and the docs print them.
func Table() string {
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "  %3d  %s\n", c.Code, c.Meaning)
	}
	return b.String()
}

// Codes lists every code, for tests.
func Codes() []Code {
	out := make([]Code, len(codes))
	for i, c := range codes {
		out[i] = c.Code
	}
	return out
}

// Error is an error with the exit code it ends the command with.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// With gives err the code, unless it already has one.
func With(code Code, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: code, Err: err}
}

// CodeOf is err's exit code: OK for nil, APIError for an error without one.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return APIError
}
