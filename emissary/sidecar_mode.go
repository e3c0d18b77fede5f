package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// staleAfter is how old the main heartbeat may get, without main.done, before a sidecar
// concludes the main container died without reporting and stops too.
const staleAfter = 30 * time.Second

const pollEvery = 250 * time.Millisecond

// runSidecar runs argv until it exits by itself or the main container is done; then it stops
// it (SIGTERM, then SIGKILL after the grace period) and exits 0, because a sidecar stopped on
// purpose has not failed. A sidecar that exits by itself keeps its own exit code.
func runSidecar(dir string, argv []string) int {
	grace := sidecarGrace()
	c := startChild(argv, os.Stdout, os.Stderr)
	stopSignals := forwardSignals(c)
	defer stopSignals()
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return c.code
		case <-t.C:
			if reason := mainFinished(dir); reason != "" {
				fmt.Fprintf(os.Stderr, "emissary: %s; stopping the sidecar\n", reason)
				c.signal(syscall.SIGTERM)
				select {
				case <-c.done:
				case <-time.After(grace):
					c.signal(syscall.SIGKILL)
					<-c.done
				}
				return 0
			}
		}
	}
}

// mainFinished says why the sidecar should stop, or "" while the main container runs.
func mainFinished(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "main.done")); err == nil {
		return "the main container has finished"
	}
	if st, err := os.Stat(filepath.Join(dir, "main.alive")); err == nil && time.Since(st.ModTime()) > staleAfter {
		return fmt.Sprintf("the main container stopped without reporting (no heartbeat for %s)", time.Since(st.ModTime()).Round(time.Second))
	}
	return ""
}

// sidecarGrace is PLUGFLOW_SIDECAR_GRACE_SECONDS (default 10).
func sidecarGrace() time.Duration {
	if s := os.Getenv("PLUGFLOW_SIDECAR_GRACE_SECONDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 10 * time.Second
}
