// Package grouplock is the rule that one replay runs per consumer group:
// the queue key (replay.ServersKey of the bootstrap servers, and the
// group), who holds a group (Holders: runner Jobs and pods, started
// requests, requests whose consumers are still paused), who waits for it
// (Waiting: requests and the trusted runbook Jobs, TrustedRunbookJob), the
// order they take turns in (Decide), what a waiting request is told
// (WaitingMessage), and the one in-memory hold between a start and the
// cache showing it (Queue, HoldSettled). Everything but Queue is pure; none
// of it takes a client.
package grouplock
