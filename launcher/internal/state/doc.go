// Package state is the vocabulary of a request's status: the launcher's
// condition reasons (next to the runner's, runner/report), the conditions
// and the phase they give, what a Job's own conditions say about it, what a
// request's spec and status say it does (PausesConsumers, ConsumersHeld,
// NeedsPlan, Approved, AwaitsDecision), and the bounded label values of the
// metrics. It is pure: it takes no client,
// and every other launcher package may import it.
package state
