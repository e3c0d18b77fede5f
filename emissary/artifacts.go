package main

// Output artifacts: once the command has ended, each declared path of the main container is
// packed into VAR_DIR/artifacts/NAME for the wait container, which cannot see the main
// container's filesystem. Packing streams (tar and gzip over a file walk): nothing is held whole
// in memory. A path that cannot be packed leaves NAME.error with the reason instead, so the wait
// container can name the artifact and the path (or skip it when the artifact is optional).

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// packSpec is one element of PLUGFLOW_ARTIFACTS (src/artifacts/plan.ts PackPlan).
type packSpec struct {
	Name             string `json:"name"`
	Path             string `json:"path"`
	Archive          string `json:"archive"`
	CompressionLevel *int   `json:"compressionLevel,omitempty"`
}

func parsePacks(text string) ([]packSpec, error) {
	if text == "" {
		return nil, nil
	}
	var out []packSpec
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("PLUGFLOW_ARTIFACTS is not a JSON list of {name, path, archive}: %v", err)
	}
	for i, p := range out {
		if p.Name == "" || p.Path == "" || p.Name != filepath.Base(p.Name) || p.Name == "." || p.Name == ".." {
			return nil, fmt.Errorf("PLUGFLOW_ARTIFACTS[%d]: needs a plain name and a path, got name %q path %q", i, p.Name, p.Path)
		}
		if p.Archive != "tar" && p.Archive != "none" {
			return nil, fmt.Errorf("PLUGFLOW_ARTIFACTS[%d]: archive must be tar or none, got %q", i, p.Archive)
		}
	}
	return out, nil
}

// packArtifacts packs every declared artifact into outDir.
func packArtifacts(outDir string, packs []packSpec) {
	if len(packs) == 0 {
		return
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "emissary: %v\n", err)
		return
	}
	for _, p := range packs {
		if err := packOne(outDir, p); err != nil {
			_ = os.Remove(filepath.Join(outDir, p.Name+".tmp"))
			_ = writeFileAtomic(filepath.Join(outDir, p.Name+".error"), []byte(err.Error()), 0o644)
		}
	}
}

func packOne(outDir string, p packSpec) error {
	st, err := os.Stat(p.Path)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s does not exist", p.Path)
		}
		return err
	}
	tmp := filepath.Join(outDir, p.Name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if p.Archive == "none" && st.IsDir() {
		f.Close()
		_ = os.Remove(tmp)
		return copyTree(p.Path, filepath.Join(outDir, p.Name))
	}
	if p.Archive == "none" {
		src, err := os.Open(p.Path)
		if err != nil {
			return err
		}
		defer src.Close()
		if _, err := io.Copy(f, src); err != nil {
			return fmt.Errorf("copying %s: %v", p.Path, err)
		}
	} else if err := writeTarGz(f, p.Path, p.CompressionLevel); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(outDir, p.Name))
}

// copyTree copies a directory for `archive: none`: the wait side stores each regular file as its
// own object under the artifact's key. Symbolic links and special files are left out (an object
// store has no such thing), as the peer does.
func copyTree(root, dest string) error {
	tmp := dest + ".tmp"
	_ = os.RemoveAll(tmp)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			src, err := os.Open(path)
			if err != nil {
				return err
			}
			defer src.Close()
			out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, src); err != nil {
				out.Close()
				return fmt.Errorf("copying %s: %v", path, err)
			}
			return out.Close()
		}
		return nil
	})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("copying %s: %v", root, err)
	}
	return os.Rename(tmp, dest)
}

// writeTarGz writes root as a gzipped tar whose entries start with root's base name (a file is
// one entry; a directory is its entry and everything below it), as the peer lays them out.
// Symbolic links are stored as links, never followed, so a link cannot pull in files from
// outside root.
func writeTarGz(w io.Writer, root string, level *int) error {
	lvl := gzip.DefaultCompression
	if level != nil {
		lvl = *level
	}
	gz, err := gzip.NewWriterLevel(w, lvl)
	if err != nil {
		return fmt.Errorf("compressionLevel %d: %v", lvl, err)
	}
	tw := tar.NewWriter(gz)
	base := filepath.Base(filepath.Clean(root))
	parent := filepath.Dir(filepath.Clean(root))
	walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		if !info.Mode().IsRegular() && !info.IsDir() && info.Mode()&fs.ModeSymlink == 0 {
			return nil // sockets, devices, pipes: not content
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(parent, path)
		if err != nil {
			return err
		}
		if rel == "." {
			rel = base
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uname, hdr.Gname = "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("reading %s: %v", path, err)
			}
		}
		return nil
	})
	if walkErr != nil {
		return fmt.Errorf("packing %s: %v", root, walkErr)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
