package replay

// RunnerUID is the distroless "nonroot" user the runner image runs as:
// the launcher's runner Jobs and the plugin's `groups` pod run it so.
const RunnerUID = 65532
