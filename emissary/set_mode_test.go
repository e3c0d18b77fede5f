package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func member(name string, after ...string) setMember {
	return setMember{name: name, after: after, members: []string{"a", "b"}}
}

func TestSetMemberWaitsForItsDependency(t *testing.T) {
	dir := t.TempDir()
	order := filepath.Join(t.TempDir(), "order")
	done := make(chan int)
	go func() { done <- runSetMember(dir, member("b", "a"), []string{"sh", "-c", "echo b >> " + order}) }()
	time.Sleep(600 * time.Millisecond)
	if _, err := os.Stat(order); err == nil {
		t.Fatal("b ran before a was done")
	}
	if code := runSetMember(dir, member("a"), []string{"sh", "-c", "echo a >> " + order}); code != 0 {
		t.Fatalf("a exited %d", code)
	}
	if code := <-done; code != 0 {
		t.Fatalf("b exited %d", code)
	}
	if got := read(t, order); got != "a\nb\n" {
		t.Fatalf("order %q", got)
	}
	// Without a main member, the last one to finish ends the set for the wait container.
	if read(t, filepath.Join(dir, "main.exitcode")) != "0" {
		t.Fatal("the set was not completed")
	}
	if _, err := os.Stat(filepath.Join(dir, "main.done")); err != nil {
		t.Fatal(err)
	}
}

func TestSetMemberIsSkippedWhenADependencyFailed(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	if code := runSetMember(dir, member("a"), []string{"sh", "-c", "exit 4"}); code != 4 {
		t.Fatalf("a exited %d, want 4", code)
	}
	if code := runSetMember(dir, member("b", "a"), []string{"sh", "-c", "touch " + marker}); code != 0 {
		t.Fatalf("a skipped member exits 0, got %d", code)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("b ran although a failed")
	}
	if got := read(t, ctrFile(dir, "b", ".exitcode")); !strings.HasPrefix(got, "skipped: dependency a failed (exit code 4)") {
		t.Fatalf("b recorded %q", got)
	}
	if read(t, filepath.Join(dir, "main.exitcode")) != "4" {
		t.Fatal("the set should end with the first failure's code")
	}
}

func TestSetMemberRetriesItsCommand(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "count")
	m := member("a")
	m.retries = 3
	m.retryWait = 10 * time.Millisecond
	// Fails twice, then succeeds.
	script := "echo x >> " + count + "; [ $(wc -l < " + count + ") -ge 3 ]"
	if code := runSetMember(dir, m, []string{"sh", "-c", script}); code != 0 {
		t.Fatalf("exited %d after retries", code)
	}
	if got := strings.Count(read(t, count), "x"); got != 3 {
		t.Fatalf("ran %d times, want 3", got)
	}
	m.retries = 1
	if code := runSetMember(t.TempDir(), m, []string{"sh", "-c", "exit 7"}); code != 7 {
		t.Fatalf("exited %d, want 7 once the retries are used up", code)
	}
}

func TestSetMainWaitsForDependenciesAndReportsOutputs(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	t.Setenv("PLUGFLOW_SET_NAME", "main")
	t.Setenv("PLUGFLOW_SET_AFTER", "a")
	t.Setenv("PLUGFLOW_SET_MEMBERS", "a,main")
	t.Setenv("PLUGFLOW_SET_HAS_MAIN", "true")
	t.Setenv("PLUGFLOW_OUTPUTS", `[{"name":"msg","path":"`+work+`/msg"}]`)
	if code := runSetMember(dir, setMember{name: "a", members: []string{"a", "main"}, hasMain: true}, []string{"sh", "-c", "echo from-a > " + work + "/msg"}); code != 0 {
		t.Fatal("a failed")
	}
	if code := runMain(dir, []string{"sh", "-c", "cat " + work + "/msg; echo main >> " + work + "/msg"}); code != 0 {
		t.Fatalf("main exited %d", code)
	}
	if got := read(t, filepath.Join(dir, "stdout")); got != "from-a\n" {
		t.Fatalf("stdout %q", got)
	}
	if got := read(t, filepath.Join(dir, "outputs", "msg")); got != "from-a\nmain\n" {
		t.Fatalf("output %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "set.complete")); err == nil {
		t.Fatal("with a main member, main itself ends the set")
	}
}

func TestSkippedMemberSaysSoInItsTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	m := member("b", "a")
	m.terminationLog = filepath.Join(t.TempDir(), "termination-log")
	runSetMember(dir, member("a"), []string{"sh", "-c", "exit 2"})
	runSetMember(dir, m, []string{"true"})
	if got := read(t, m.terminationLog); got != "skipped: dependency a failed (exit code 2)" {
		t.Fatalf("termination message %q", got)
	}
}

func TestSetMainReadsOutputsOnceEveryMemberIsDone(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	t.Setenv("PLUGFLOW_SET_NAME", "main")
	t.Setenv("PLUGFLOW_SET_AFTER", "")
	t.Setenv("PLUGFLOW_SET_MEMBERS", "a,main")
	t.Setenv("PLUGFLOW_SET_HAS_MAIN", "true")
	t.Setenv("PLUGFLOW_OUTPUTS", `[{"name":"out","path":"`+work+`/out"}]`)
	// a runs beside main, without a dependency, and writes the output after main has exited.
	done := make(chan int)
	go func() {
		done <- runSetMember(dir, setMember{name: "a", members: []string{"a", "main"}, hasMain: true},
			[]string{"sh", "-c", "sleep 1; echo from-a > " + work + "/out"})
	}()
	if code := runMain(dir, []string{"true"}); code != 0 {
		t.Fatalf("main exited %d", code)
	}
	if code := <-done; code != 0 {
		t.Fatalf("a exited %d", code)
	}
	if got := read(t, filepath.Join(dir, "outputs", "out")); got != "from-a\n" {
		t.Fatalf("output %q", got)
	}
}

func TestWaitForMembersGivesUpOnAMemberThatNeverStarts(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	waitForMembers(dir, setMember{name: "main", members: []string{"never", "main"}}, 300*time.Millisecond)
	if time.Since(start) > 5*time.Second {
		t.Fatal("waited for a member that never started")
	}
}
