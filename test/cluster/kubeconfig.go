package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteKubeconfig writes the cluster's admin kubeconfig to path, for tools
// outside the harness (make dev-cluster). It names the certificates in the
// state directory, so it is good while the cluster runs; its server is the
// node IP, reachable only inside NetNS. The file grants cluster-admin: it is
// written 0600, whole or not at all.
func (c *Cluster) WriteKubeconfig(path string) error {
	return copyPrivate(c.Kubeconfig(), path)
}

// copyPrivate copies src to dst with mode 0600 through a temporary file in
// dst's directory, so a reader never sees half a file and an existing dst is
// replaced at once. dst must not be a directory.
func copyPrivate(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file; not replacing it", dst)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// SweepStale tears down every cluster whose owner process is gone (killed
// before it could clean up), as Start does first.
func SweepStale(logf func(string, ...any)) { sweepStale(logf) }

// ProcessStart is pid's start time, which with the PID identifies a process
// even after the PID is reused; empty if there is no such process.
func ProcessStart(pid int) string { return procStart(pid) }
