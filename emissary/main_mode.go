package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// heartbeatEvery is how often main.alive is touched; the wait container and the sidecars treat
// a heartbeat older than a few periods, without main.done, as a main container that was killed
// before it could report (for example by the OOM killer).
const heartbeatEvery = 2 * time.Second

// maxOutputBytes bounds the copy of one output parameter file. The wait container enforces the
// real limit (the termination message); this only keeps a runaway file from filling the volume.
const maxOutputBytes = 1 << 20

// outputSpec is one element of PLUGFLOW_OUTPUTS.
type outputSpec struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

func runMain(dir string, argv []string) int {
	outputs, err := parseOutputs(os.Getenv("PLUGFLOW_OUTPUTS"))
	if err != nil {
		// Still run the command: its exit code and stdout are worth reporting, and the wait
		// container reports the bad variable itself.
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	packs, err := parsePacks(os.Getenv("PLUGFLOW_ARTIFACTS"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	if src, ok := os.LookupEnv("PLUGFLOW_SCRIPT"); ok {
		if err := writeFileAtomic(filepath.Join(dir, "script"), []byte(src), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "emissary: writing the script: %v\n", err)
			return finish(dir, 1, nil, nil)
		}
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "emissary: creating %s: %v\n", filepath.Join(dir, "stdout"), err)
		return finish(dir, 1, nil, nil)
	}
	// archiveLogs: both streams, as the container log has them, also go to main.log, which
	// the plan packs as the artifact main-logs (PLUGFLOW_ARCHIVE_LOGS names it).
	var outW, errW io.Writer = io.MultiWriter(os.Stdout, stdout), os.Stderr
	if logPath := os.Getenv("PLUGFLOW_ARCHIVE_LOGS"); logPath != "" {
		if logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
		} else {
			defer logFile.Close()
			shared := &lockedWriter{w: logFile}
			outW, errW = io.MultiWriter(os.Stdout, stdout, shared), io.MultiWriter(os.Stderr, shared)
		}
	}
	stopBeat := heartbeat(filepath.Join(dir, "main.alive"))
	member, inSet, _ := setFromEnv()
	if inSet {
		// The main member of a container set: its dependencies first, then its command (retried).
		_ = os.MkdirAll(filepath.Join(dir, "ctr"), 0o755)
		stopOwn := heartbeat(ctrFile(dir, member.name, ".alive"))
		defer stopOwn()
		if why := waitForDependencies(dir, member); why != "" {
			fmt.Fprintf(os.Stderr, "emissary: %s: not running main\n", why)
			sayTerminated(member, "skipped: "+why)
			stopBeat()
			_ = stdout.Close()
			recordMember(dir, member, "skipped: "+why)
			return finish(dir, 1, outputs, packs)
		}
		code := runWithRetries(member, argv, outW, errW)
		_ = stdout.Close()
		recordMember(dir, member, strconv.Itoa(code))
		// The set's outputs are read once every member is done, as the peer's wait container
		// does: a member other than main may write them into a shared volume.
		waitForMembers(dir, member, staleAfter)
		stopBeat()
		return finish(dir, code, outputs, packs)
	}
	c := startChild(argv, outW, errW)
	stopSignals := forwardSignals(c)
	<-c.done
	stopSignals()
	stopBeat()
	_ = stdout.Close()
	return finish(dir, c.code, outputs, packs)
}

// finish copies the output files, packs the output artifacts, records the exit code and marks the main container done,
// in that order: whoever sees main.done can trust everything else to be complete.
func finish(dir string, code int, outputs []outputSpec, packs []packSpec) int {
	outDir := filepath.Join(dir, "outputs")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	for _, o := range outputs {
		copyOutput(outDir, o)
	}
	packArtifacts(filepath.Join(dir, "artifacts"), packs)
	if err := writeFileAtomic(filepath.Join(dir, "main.exitcode"), []byte(strconv.Itoa(code)), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "main.done"), nil, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
	}
	return code
}

func parseOutputs(text string) ([]outputSpec, error) {
	if text == "" {
		return nil, nil
	}
	var out []outputSpec
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("PLUGFLOW_OUTPUTS is not a JSON list of {name, path}: %v", err)
	}
	for i, o := range out {
		if o.Name == "" || o.Path == "" || o.Name != filepath.Base(o.Name) || o.Name == "." || o.Name == ".." {
			return nil, fmt.Errorf("PLUGFLOW_OUTPUTS[%d]: needs a plain name and a path, got name %q path %q", i, o.Name, o.Path)
		}
	}
	return out, nil
}

// copyOutput copies one declared file into outputs/NAME, or writes outputs/NAME.error with the
// reason, so that the wait container can name the parameter and the path in its message.
func copyOutput(outDir string, o outputSpec) {
	fail := func(format string, a ...any) {
		_ = writeFileAtomic(filepath.Join(outDir, o.Name+".error"), []byte(fmt.Sprintf(format, a...)), 0o644)
	}
	f, err := os.Open(o.Path)
	if err != nil {
		fail("%v", err)
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		fail("%s is a directory, not a file", o.Path)
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, maxOutputBytes+1))
	if err != nil {
		fail("reading %s: %v", o.Path, err)
		return
	}
	if len(data) > maxOutputBytes {
		fail("%s is larger than %d bytes; use an output artifact for large values", o.Path, maxOutputBytes)
		return
	}
	if err := writeFileAtomic(filepath.Join(outDir, o.Name), data, 0o644); err != nil {
		fail("%v", err)
	}
}

// writeFileAtomic writes through a temporary file and a rename, so a reader never sees half.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// heartbeat touches path now and then every heartbeatEvery until the returned stop is called.
func heartbeat(path string) func() {
	touch := func() {
		now := time.Now()
		if err := os.Chtimes(path, now, now); err != nil {
			_ = os.WriteFile(path, nil, 0o644)
		}
	}
	touch()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				touch()
			case <-stop:
				return
			}
		}
	}()
	return func() { close(stop) }
}

// lockedWriter lets the stdout and stderr copies share one log file without interleaving a write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
