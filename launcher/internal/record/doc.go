// Package record says what a finished runner Job did, over every attempt
// (its pods), and keeps it: the Outcome a request's status and the Job's
// annotations show, and the ReplayRecord that holds every partition. The
// deciding is pure (AttemptsOf, MergeAttempts, mergeResults, BuildRecord);
// Collector reads the pods' logs and writes the record, and is the only
// part that takes a client.
package record
