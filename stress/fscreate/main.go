// Command fscreate times what a restore's files cost the kernel, apart from any tool: it makes
// FOLDERS folders of FILES small files each under DIR, four ways, each after removing the tree
// the way before made (as `rm -rf packages/*/dist` does before a restore):
//
//	create  open(O_CREAT|O_EXCL), close: a new inode per file
//	write   the same with 200 bytes written, as a restore does
//	link    a hard link to one of FILES files made once: no new inode
//	dirs    the folders alone
//
// On an ext4 file system without a journal, a new inode is looked for past every inode deleted
// in the last minutes (the kernel's recently_deleted): creating files just after deleting as many
// costs far more than creating them anywhere else (docs/performance.md, "Engine speed against
// Turborepo"). Usage: go run ./stress/fscreate DIR [FOLDERS=300] [FILES=20] [ROUNDS=3]
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fscreate DIR [FOLDERS] [FILES] [ROUNDS]")
		os.Exit(2)
	}
	dir := os.Args[1]
	folders, files, rounds := arg(2, 300), arg(3, 20), arg(4, 3)
	if err := run(dir, folders, files, rounds); err != nil {
		fmt.Fprintln(os.Stderr, "fscreate:", err)
		os.Exit(1)
	}
}

func arg(i, def int) int {
	if len(os.Args) <= i {
		return def
	}
	n, err := strconv.Atoi(os.Args[i])
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "fscreate: argument %d: want a positive number, got %q\n", i, os.Args[i])
		os.Exit(2)
	}
	return n
}

func run(dir string, folders, files, rounds int) error {
	src := filepath.Join(dir, "src")
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	data := make([]byte, 200)
	for f := range files {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d.js", f)), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("| way | %d folders × %d files, each round after removing the last tree |\n| --- | --- |\n", folders, files)
	for _, way := range []string{"dirs", "create", "write", "link"} {
		var times []string
		for range rounds {
			if err := os.RemoveAll(tree); err != nil {
				return err
			}
			start := time.Now()
			if err := makeTree(tree, src, way, folders, files, data); err != nil {
				return fmt.Errorf("%s: %w", way, err)
			}
			times = append(times, time.Since(start).Round(time.Millisecond).String())
		}
		fmt.Printf("| %s | %v |\n", way, times)
	}
	return os.RemoveAll(dir)
}

func makeTree(tree, src, way string, folders, files int, data []byte) error {
	for p := range folders {
		d := filepath.Join(tree, strconv.Itoa(p), "dist")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for f := range files {
			name := fmt.Sprintf("f%d.js", f)
			var err error
			switch way {
			case "create":
				var fh *os.File
				if fh, err = os.OpenFile(filepath.Join(d, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
					err = fh.Close()
				}
			case "write":
				err = os.WriteFile(filepath.Join(d, name), data, 0o644)
			case "link":
				err = os.Link(filepath.Join(src, name), filepath.Join(d, name))
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
