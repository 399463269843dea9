package runner

// MaxPartitionsPerCall is how the read-back is split, for the external tests.
const MaxPartitionsPerCall = maxPartitionsPerCall
