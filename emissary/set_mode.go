package main

// Container sets (a containerSet template): every container of the set runs under the emissary,
// all containers start together, and each one's command waits for the containers it depends on.
// The set is described by environment variables the pod builder sets on each member:
//
//	PLUGFLOW_SET_NAME          this container's name
//	PLUGFLOW_SET_AFTER         the names it depends on, comma-separated
//	PLUGFLOW_SET_MEMBERS       every member's name, comma-separated
//	PLUGFLOW_SET_HAS_MAIN      "true" when a member is named main (it reports the outputs)
//	PLUGFLOW_SET_RETRIES       how many times a failed command is run again (retryStrategy.retries)
//	PLUGFLOW_SET_RETRY_WAIT_MS the wait between two runs (retryStrategy.duration)
//	PLUGFLOW_SET_TERMINATION_LOG the container's terminationMessagePath: a member that does not run
//	                           says why there ("skipped: …"), so the pod status tells skipped from done
//
// Files, in the shared directory:
//
//	ctr/NAME.alive     touched while the member runs or waits (a killed member goes stale)
//	ctr/NAME.exitcode  its command's exit code, or "skipped: …" when a dependency did not succeed
//	ctr/NAME.done      created last
//
// A member whose dependency failed, was skipped or died does not run its command and exits 0
// (the pod already fails through the dependency). Without a member named main, the last member
// to finish writes main.exitcode (the first non-zero code of the set, else 0) and main.done, so
// the wait container and sidecars see the set end as they see a main container end.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type setMember struct {
	terminationLog string
	name           string
	after          []string
	members        []string
	hasMain        bool
	retries        int
	retryWait      time.Duration
}

// setFromEnv reads the member description; ok is false outside a container set.
func setFromEnv() (setMember, bool, error) {
	name := os.Getenv("PLUGFLOW_SET_NAME")
	if name == "" {
		return setMember{}, false, nil
	}
	m := setMember{name: name, after: splitList(os.Getenv("PLUGFLOW_SET_AFTER")), members: splitList(os.Getenv("PLUGFLOW_SET_MEMBERS"))}
	m.hasMain = os.Getenv("PLUGFLOW_SET_HAS_MAIN") == "true"
	m.terminationLog = os.Getenv("PLUGFLOW_SET_TERMINATION_LOG")
	if s := os.Getenv("PLUGFLOW_SET_RETRIES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return m, true, fmt.Errorf("PLUGFLOW_SET_RETRIES is not a count: %q", s)
		}
		m.retries = n
	}
	if s := os.Getenv("PLUGFLOW_SET_RETRY_WAIT_MS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return m, true, fmt.Errorf("PLUGFLOW_SET_RETRY_WAIT_MS is not a number of milliseconds: %q", s)
		}
		m.retryWait = time.Duration(n) * time.Millisecond
	}
	return m, true, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ctrFile(dir, name, suffix string) string {
	return filepath.Join(dir, "ctr", name+suffix)
}

// waitForDependencies blocks until every dependency is done; it returns why this member must not
// run ("" when all succeeded).
func waitForDependencies(dir string, m setMember) string {
	for _, dep := range m.after {
		for {
			if _, err := os.Stat(ctrFile(dir, dep, ".done")); err == nil {
				break
			}
			if st, err := os.Stat(ctrFile(dir, dep, ".alive")); err == nil && time.Since(st.ModTime()) > staleAfter {
				return fmt.Sprintf("dependency %s stopped without reporting (no heartbeat for %s)", dep, time.Since(st.ModTime()).Round(time.Second))
			}
			time.Sleep(pollEvery)
		}
		code, _ := os.ReadFile(ctrFile(dir, dep, ".exitcode"))
		text := strings.TrimSpace(string(code))
		if text != "0" {
			if strings.HasPrefix(text, "skipped") {
				return fmt.Sprintf("dependency %s was skipped", dep)
			}
			return fmt.Sprintf("dependency %s failed (exit code %s)", dep, text)
		}
	}
	return ""
}

// runSetMember runs a member that is not main: wait, run (with retries), record.
func runSetMember(dir string, m setMember, argv []string) int {
	if err := os.MkdirAll(filepath.Join(dir, "ctr"), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	beats := []func(){heartbeat(ctrFile(dir, m.name, ".alive"))}
	if !m.hasMain {
		beats = append(beats, heartbeat(filepath.Join(dir, "main.alive")))
	}
	stop := func() {
		for _, b := range beats {
			b()
		}
	}
	if why := waitForDependencies(dir, m); why != "" {
		fmt.Fprintf(os.Stderr, "emissary: %s: not running %s\n", why, m.name)
		stop()
		sayTerminated(m, "skipped: "+why)
		recordMember(dir, m, "skipped: "+why)
		return 0
	}
	code := runWithRetries(m, argv, os.Stdout, os.Stderr)
	stop()
	recordMember(dir, m, strconv.Itoa(code))
	return code
}

// waitForMembers blocks until every other member of the set is done, has stopped its heartbeat,
// or has not started within notStarted (an image that never pulls must not hold the outputs back
// for ever).
func waitForMembers(dir string, m setMember, notStarted time.Duration) {
	since := time.Now()
	for _, other := range m.members {
		if other == m.name {
			continue
		}
		for {
			if _, err := os.Stat(ctrFile(dir, other, ".done")); err == nil {
				break
			}
			st, err := os.Stat(ctrFile(dir, other, ".alive"))
			if err == nil && time.Since(st.ModTime()) > staleAfter {
				break
			}
			if err != nil && time.Since(since) > notStarted {
				fmt.Fprintf(os.Stderr, "emissary: %s has not started; reading the outputs without it\n", other)
				break
			}
			time.Sleep(pollEvery)
		}
	}
}

// runWithRetries runs argv up to 1+retries times until it exits 0, waiting retryWait between runs.
func runWithRetries(m setMember, argv []string, out, errOut interface{ Write([]byte) (int, error) }) int {
	code := 0
	for attempt := 0; attempt <= m.retries; attempt++ {
		if attempt > 0 {
			fmt.Fprintf(os.Stderr, "emissary: %s exited %d; running it again (%d of %d retries)\n", m.name, code, attempt, m.retries)
			time.Sleep(m.retryWait)
		}
		c := startChild(argv, out, errOut)
		stopSignals := forwardSignals(c)
		<-c.done
		stopSignals()
		code = c.code
		if code == 0 {
			break
		}
	}
	return code
}

// recordMember writes the member's result; without a main member, the last one ends the set.
func recordMember(dir string, m setMember, result string) {
	if err := writeFileAtomic(ctrFile(dir, m.name, ".exitcode"), []byte(result), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	if err := writeFileAtomic(ctrFile(dir, m.name, ".done"), nil, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	if !m.hasMain {
		completeSet(dir, m)
	}
}

// completeSet writes main.exitcode and main.done once every member is done, exactly once.
func completeSet(dir string, m setMember) {
	first := 0
	for _, name := range m.members {
		code, err := os.ReadFile(ctrFile(dir, name, ".exitcode"))
		if _, derr := os.Stat(ctrFile(dir, name, ".done")); derr != nil || err != nil {
			return
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(code))); err == nil && n != 0 && first == 0 {
			first = n
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "set.complete"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return // another member completes it
	}
	_ = f.Close()
	_ = writeFileAtomic(filepath.Join(dir, "main.exitcode"), []byte(strconv.Itoa(first)), 0o644)
	_ = writeFileAtomic(filepath.Join(dir, "main.done"), nil, 0o644)
}

// sayTerminated writes the container's termination message (best effort: outside a pod there is
// no such file).
func sayTerminated(m setMember, text string) {
	if m.terminationLog == "" {
		return
	}
	_ = os.WriteFile(m.terminationLog, []byte(text), 0o644)
}
