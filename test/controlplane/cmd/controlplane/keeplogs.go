package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// keepLogs copies the *.log files of dir (a control plane's data
// directory) into to, which it creates; a failure is reported on stderr
// and does not fail the run.
func keepLogs(dir, to string) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err == nil {
		err = os.MkdirAll(to, 0o755)
	}
	for _, l := range logs {
		if err != nil {
			break
		}
		err = copyFile(l, filepath.Join(to, filepath.Base(l)))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "compare: -keep-logs: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, "compare: -keep-logs: %d log(s) copied to %s\n", len(logs), to)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// logDirName turns a run's label into a directory name.
func logDirName(label string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, label)
}
