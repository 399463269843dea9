// Package approval decides a Manual request's plan: its fate from the
// request's annotations and the clock (Decide: a rejection wins, then the
// expiry, then an approve annotation equal to the plan's digest), when it
// expires (PlanExpiry), a rejection that comes after the approval
// (LateRejection), and the approval under which an apply Job that status
// does not name yet is adopted (Adopted, Adopt). It is pure: the launcher
// reads the request and its Job and writes what these say.
package approval
