// Command pause is the pod sandbox process of the dev node: containerd starts it first in every pod
// to hold the pod's namespaces. It waits for SIGTERM or SIGINT and, as PID 1 of a pod that shares
// its PID namespace, reaps the children other containers leave behind. Built here so the node needs
// no registry (containerd's sandbox_image names this image).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren collects every exited child without blocking.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
