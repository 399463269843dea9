package runner

// OffsetFetchLimit is how the read-back is split, for the external tests.
var OffsetFetchLimit = offsetFetchLimit
