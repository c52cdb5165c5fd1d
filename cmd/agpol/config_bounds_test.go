package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConfigBounded: .agpol.yaml (read by every command from the current directory) and
// --config are refused, naming the file, with exit 2 when they are not regular files or
// are over the documented 1 MiB, and are never read whole first.
func TestConfigBounded(t *testing.T) {
	tmp := t.TempDir()
	svc := write(t, filepath.Join(tmp, "in", "svc.yaml"), []byte(hostileService))

	zero := filepath.Join(tmp, "zero", ".agpol.yaml")
	if err := os.MkdirAll(filepath.Dir(zero), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(tmp, "fifo", ".agpol.yaml")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A valid config of 2 MiB: only its size is wrong.
	var b bytes.Buffer
	b.WriteString("suppressions:\n")
	for b.Len() < 2<<20 {
		b.WriteString("- {code: AGP405, reason: public read-only tools, object: XAccessPolicy/default/p}\n")
	}
	big := write(t, filepath.Join(tmp, "big", ".agpol.yaml"), b.Bytes())

	for _, tt := range []struct {
		name, file, want string
	}{
		{"symlink to /dev/zero", zero, "not a regular file (a device)"},
		{"named pipe", fifo, "not a regular file (a named pipe)"},
		{"over 1 MiB", big, "larger than 1 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.file
			check := func(args ...string) {
				t.Helper()
				code, out, errOut := runGuarded(t, 20*time.Second, args...)
				if code != exitUsage || out != "" || !strings.Contains(errOut, "config "+name+": "+tt.want) {
					t.Errorf("agpol %s: exit %d, stdout %q, stderr %q; want exit 2 naming %s: %s",
						strings.Join(args, " "), code, out, errOut, name, tt.want)
				}
			}
			check("lint", "--config", tt.file, "-f", svc)
			t.Chdir(filepath.Dir(tt.file)) // the default .agpol.yaml, read by every command
			name = ".agpol.yaml"
			check("lint", "-f", svc)
			check("get", "gateways", "-f", svc)
			check("explain", "-f", svc, "--from", "anonymous", "--tool", "t", "--backend", "b")
		})
	}
}
