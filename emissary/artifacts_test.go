package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func tarEntries(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		switch h.Typeflag {
		case tar.TypeSymlink:
			out[h.Name] = "-> " + h.Linkname
		case tar.TypeDir:
			out[h.Name] = "dir"
		default:
			out[h.Name] = string(body)
		}
	}
}

func TestPackDirectoryKeepsLinksAsLinks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "out")
	must(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("A"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "sub", "b.txt"), []byte("B"), 0o644))
	must(t, os.Symlink("/etc/passwd", filepath.Join(src, "link")))
	dest := t.TempDir()
	packArtifacts(dest, []packSpec{{Name: "dir", Path: src, Archive: "tar"}})
	got := tarEntries(t, filepath.Join(dest, "dir"))
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "out/,out/a.txt,out/link,out/sub/,out/sub/b.txt" {
		t.Fatalf("entries %v", names)
	}
	if got["out/link"] != "-> /etc/passwd" || got["out/sub/b.txt"] != "B" {
		t.Fatalf("contents %v", got)
	}
}

func TestPackFileAndNone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "msg.txt")
	must(t, os.WriteFile(file, []byte("hello"), 0o600))
	dest := t.TempDir()
	packArtifacts(dest, []packSpec{{Name: "t", Path: file, Archive: "tar"}, {Name: "n", Path: file, Archive: "none"}, {Name: "d", Path: dir, Archive: "none"}, {Name: "m", Path: filepath.Join(dir, "nope"), Archive: "tar"}})
	if got := tarEntries(t, filepath.Join(dest, "t")); len(got) != 1 || got["msg.txt"] != "hello" {
		t.Fatalf("tar of a file: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "n")); string(b) != "hello" {
		t.Fatalf("none: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "d", "msg.txt")); string(b) != "hello" {
		t.Fatalf("none of a directory is copied as a tree: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "m.error")); !strings.Contains(string(b), "does not exist") {
		t.Fatalf("missing path: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dest, "m")); !os.IsNotExist(err) {
		t.Fatalf("a missing path left a packed file")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
