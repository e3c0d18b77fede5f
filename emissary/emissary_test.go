package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"--sidecar", "--", "nginx", "-g", "--"})
	if err != nil || !o.sidecar || strings.Join(o.argv, " ") != "nginx -g --" {
		t.Fatalf("got %+v, %v", o, err)
	}
	for _, bad := range [][]string{{}, {"--"}, {"echo"}, {"--verbose", "--", "x"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMainModeRecordsStdoutExitCodeAndOutputs(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	t.Setenv("PLUGFLOW_SCRIPT", "echo from-script; printf 42 > "+work+"/answer; exit 3")
	t.Setenv("PLUGFLOW_OUTPUTS", `[{"name":"answer","path":"`+work+`/answer"},{"name":"missing","path":"`+work+`/nope"}]`)
	code := runMain(dir, []string{"sh", filepath.Join(dir, "script")})
	if code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	if got := read(t, filepath.Join(dir, "stdout")); got != "from-script\n" {
		t.Errorf("stdout %q", got)
	}
	if got := read(t, filepath.Join(dir, "main.exitcode")); got != "3" {
		t.Errorf("main.exitcode %q", got)
	}
	if got := read(t, filepath.Join(dir, "outputs", "answer")); got != "42" {
		t.Errorf("outputs/answer %q", got)
	}
	if got := read(t, filepath.Join(dir, "outputs", "missing.error")); !strings.Contains(got, "no such file") {
		t.Errorf("outputs/missing.error %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.done")); err != nil {
		t.Errorf("main.done: %v", err)
	}
}

func TestMainModeCommandNotFound(t *testing.T) {
	dir := t.TempDir()
	if code := runMain(dir, []string{"/nonexistent/program"}); code != 127 {
		t.Fatalf("exit code %d, want 127", code)
	}
	if got := read(t, filepath.Join(dir, "main.exitcode")); got != "127" {
		t.Errorf("main.exitcode %q", got)
	}
}

func TestSidecarStopsWhenMainIsDone(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PLUGFLOW_SIDECAR_GRACE_SECONDS", "5")
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = os.WriteFile(filepath.Join(dir, "main.done"), nil, 0o644)
	}()
	start := time.Now()
	// The trap proves the stop is a SIGTERM that the sidecar can handle.
	code := runSidecar(dir, []string{"sh", "-c", "trap 'exit 9' TERM; while true; do sleep 0.1; done"})
	if code != 0 {
		t.Fatalf("exit code %d, want 0 for a sidecar stopped on purpose", code)
	}
	if time.Since(start) > 4*time.Second {
		t.Fatalf("sidecar took %s to stop; SIGTERM was not delivered", time.Since(start))
	}
}

func TestSidecarKeepsItsOwnExitCode(t *testing.T) {
	if code := runSidecar(t.TempDir(), []string{"sh", "-c", "exit 4"}); code != 4 {
		t.Fatalf("exit code %d, want 4", code)
	}
}

func TestSidecarKilledAfterGrace(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PLUGFLOW_SIDECAR_GRACE_SECONDS", "1")
	if err := os.WriteFile(filepath.Join(dir, "main.done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code := runSidecar(dir, []string{"sh", "-c", "trap '' TERM; while true; do sleep 0.1; done"})
	if code != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("code %d after %s", code, time.Since(start))
	}
}

func TestSidecarStopsWhenMainHeartbeatIsStale(t *testing.T) {
	dir := t.TempDir()
	alive := filepath.Join(dir, "main.alive")
	if err := os.WriteFile(alive, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleAfter)
	if err := os.Chtimes(alive, old, old); err != nil {
		t.Fatal(err)
	}
	if reason := mainFinished(dir); !strings.Contains(reason, "without reporting") {
		t.Fatalf("mainFinished = %q", reason)
	}
	now := time.Now()
	_ = os.Chtimes(alive, now, now)
	if reason := mainFinished(dir); reason != "" {
		t.Fatalf("fresh heartbeat: mainFinished = %q", reason)
	}
}
