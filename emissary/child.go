package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// child is the wrapped process. It runs in its own process group so that a stop reaches the
// processes it started too (a shell and its pipeline), not only the first one.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	code int
}

// startChild starts argv with the container's stdin; stdout goes to out, stderr to errOut.
// A command that cannot be started yields a child that has already "exited" with the shell's
// conventional code (127 not found, 126 not executable), so callers handle one path only.
func startChild(argv []string, out io.Writer, errOut io.Writer) *child {
	c := &child{done: make(chan struct{})}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return failedChild(c, argv[0], err)
	}
	c.cmd = exec.Command(path, argv[1:]...)
	c.cmd.Args[0] = argv[0]
	c.cmd.Stdin = os.Stdin
	c.cmd.Stdout = out
	c.cmd.Stderr = errOut
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return failedChild(c, argv[0], err)
	}
	go func() {
		c.code = exitCodeOf(c.cmd.Wait())
		close(c.done)
	}()
	return c
}

func failedChild(c *child, name string, err error) *child {
	fmt.Fprintf(os.Stderr, "emissary: cannot run %q: %v\n", name, err)
	c.code = 127
	if errors.Is(err, os.ErrPermission) {
		c.code = 126
	}
	close(c.done)
	return c
}

// exitCodeOf maps a Wait error to a container-style exit code: 128+N for a signal.
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// signal sends sig to the child's whole process group (falling back to the child alone).
func (c *child) signal(sig syscall.Signal) {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	if err := syscall.Kill(-c.cmd.Process.Pid, sig); err != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// forwardSignals passes the signals a container receives (the kubelet stopping it) on to the
// child, since the emissary is PID 1 and the child would otherwise never hear of them.
func forwardSignals(c *child) func() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				if sig, ok := s.(syscall.Signal); ok {
					c.signal(sig)
				}
			case <-stop:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(stop) }
}
