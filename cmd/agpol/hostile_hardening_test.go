package main

// Hostile input through the whole CLI, in-process: every input is refused with exit 2
// and a message naming the file (and the line where there is one), never a panic or a
// hang. Each run is guarded by a timeout so a hang fails the test instead of the suite.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const hostileDir = "../../testdata/hostile"

// runGuarded runs agpol in-process and fails the test if it does not return within limit.
func runGuarded(t *testing.T, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		c := run(ctx, append([]string{"agpol"}, args...), streams)
		done <- result{c, out.String(), errOut.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(limit):
		t.Fatalf("agpol %s did not finish within %s (hang)", strings.Join(args, " "), limit)
	}
	return 0, "", ""
}

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const hostileService = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: default}\nspec: {ports: [{port: 80}]}\n"

// TestHostileCLI: every hostile input exits 2 with "error: FILE[:LINE]: message" on
// stderr, nothing on stdout, for every reading command.
func TestHostileCLI(t *testing.T) {
	tmp := t.TempDir()

	// 100 MB: larger than the default 64 MiB per file. Written in chunks of a valid
	// document so only the size is wrong.
	big := filepath.Join(tmp, "big.yaml")
	func() {
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := bytes.Repeat([]byte(hostileService+"---\n"), (1<<20)/(len(hostileService)+4))
		for written := 0; written < 100<<20; written += len(chunk) {
			if _, err := f.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
	}()

	// 100k documents, the last one broken: the error names its line far down the file.
	var many strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&many, "apiVersion: v1\nkind: Namespace\nmetadata: {name: n%d}\n---\n", i)
	}
	manyLine := 100000*4 + 3 // the third line of the last document
	many.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: [}\n")
	manyDocs := write(t, filepath.Join(tmp, "many.yaml"), []byte(many.String()))
	// More documents than the loader accepts (200000), all empty: refused by count.
	tooMany := write(t, filepath.Join(tmp, "too-many.yaml"), bytes.Repeat([]byte("---\n"), 200002))

	// A directory with an entry that cannot be read: a dangling symlink; a named pipe
	// (opening it would block forever); a symlink to itself.
	dangling := filepath.Join(tmp, "dangling")
	write(t, filepath.Join(dangling, "a.yaml"), []byte(hostileService))
	if err := os.Symlink("gone.yaml", filepath.Join(dangling, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	fifoDir := filepath.Join(tmp, "fifo")
	write(t, filepath.Join(fifoDir, "a.yaml"), []byte(hostileService))
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirNamedYAML := filepath.Join(tmp, "dirnamed")
	write(t, filepath.Join(dirNamedYAML, "real", "a.yaml"), []byte(hostileService))
	if err := os.Symlink("real", filepath.Join(dirNamedYAML, "x.yaml")); err != nil {
		t.Fatal(err)
	}
	selfLoop := filepath.Join(tmp, "selfloop")
	write(t, filepath.Join(selfLoop, "a.yaml"), []byte(hostileService))
	if err := os.MkdirAll(filepath.Join(selfLoop, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("self.yaml", filepath.Join(selfLoop, "sub", "self.yaml")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		file string // what -f names
		args []string
		// where is the "FILE:LINE" (or "FILE") the message must start with.
		where string
		msg   string
	}{
		{"alias bomb", hostileDir + "/alias-bomb.yaml", nil, hostileDir + "/alias-bomb.yaml:10", "YAML alias bomb"},
		{"100 MB file", big, nil, big, "file is larger than 64 MiB"},
		{"100k documents, the last broken", manyDocs, nil, fmt.Sprintf("%s:%d", manyDocs, manyLine), "malformed YAML"},
		{"over 200000 documents", tooMany, nil, tooMany, "more than 200000 documents"},
		{"deep nesting", "../../testdata/hostile/cli/deep-nesting.yaml", nil, "../../testdata/hostile/cli/deep-nesting.yaml:5", "nesting deeper than 200 levels"},
		{"duplicate keys", hostileDir + "/duplicate-keys.yaml", nil, hostileDir + "/duplicate-keys.yaml:8", `duplicate key "action"`},
		{"invalid UTF-8", hostileDir + "/invalid-utf8.yaml", nil, hostileDir + "/invalid-utf8.yaml:4", "invalid UTF-8"},
		{"binary file", "../../testdata/hostile/cli/binary.yaml", nil, "../../testdata/hostile/cli/binary.yaml", "binary file"},
		{"dangling symlink in a directory", dangling, nil, filepath.Join(dangling, "b.yaml"), "no such file or directory"},
		{"named pipe in a directory", fifoDir, nil, filepath.Join(fifoDir, "pipe.yaml"), "not a regular file (a named pipe)"},
		{"symlink named x.yaml to a directory", dirNamedYAML, nil, filepath.Join(dirNamedYAML, "x.yaml"), "not a regular file (a directory)"},
		{"symlink loop with -R", selfLoop, []string{"-R"}, filepath.Join(selfLoop, "sub", "self.yaml"), "too many levels of symbolic links"},
	}
	commands := [][]string{
		{"get", "xap,xb,gw,routes"},
		{"lint"},
		{"explain", "--from", "anonymous", "--gateway", "infra/edge", "--backend", "pay/ledger", "--tool", "x"},
		{"describe", "gateway", "infra/edge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, cmd := range commands {
				if i > 0 && (tt.file == big || tt.file == manyDocs || tt.file == tooMany) {
					break // the big inputs once: the loader is shared by every command
				}
				args := append(append(append([]string{}, cmd...), "-f", tt.file), tt.args...)
				code, out, errOut := runGuarded(t, 3*time.Minute, args...)
				if code != exitUsage || out != "" {
					t.Fatalf("%s: exit %d, stdout %q, stderr %q", cmd[0], code, firstLine(out), errOut)
				}
				want := "error: " + tt.where + ": "
				if !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, tt.msg) {
					t.Errorf("%s: stderr %q, want it to start with %q and contain %q", cmd[0], firstLine(errOut), want, tt.msg)
				}
				if strings.Contains(errOut, "internal error") || strings.Contains(errOut, "goroutine ") {
					t.Errorf("%s: a panic: %s", cmd[0], errOut)
				}
			}
		})
	}
}

// TestHostileDirectorySymlinkLoop: -R does not follow a symlink back to a parent
// directory, so a directory loop reads each file once and finishes.
func TestHostileDirectorySymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sub", "b.yaml"), []byte(`apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: loopy, namespace: default}
spec: {mcp: {serviceName: s, port: 80}}
`))
	if err := os.Symlink("..", filepath.Join(dir, "sub", "up")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runGuarded(t, time.Minute, "get", "xbackends", "-A", "-R", "-f", dir)
	if code != exitOK || strings.Count(out, "loopy") != 1 {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestHostileRequestFiles: request files are bounded and located too: a request file
// larger than the limit (or endless, like /dev/zero) is refused, not read into memory;
// a bad request names its line.
func TestHostileRequestFiles(t *testing.T) {
	tmp := t.TempDir()
	huge := filepath.Join(tmp, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: 100 MB of NULs
		t.Fatal(err)
	}
	f.Close()
	bad := write(t, filepath.Join(tmp, "bad.yaml"), []byte("requests:\n- name: a\n  http: {port: 0}\n"))
	bomb := write(t, filepath.Join(tmp, "bomb.yaml"), []byte("requests: &r\n- name: a\n  from: *r\n"))
	tests := []struct {
		file, want string
	}{
		{huge, "error: reading request file: " + huge + ": larger than 16 MiB"},
		{"/dev/zero", "error: reading request file: /dev/zero: larger than 16 MiB"},
		{bad, "error: " + bad + ":3: invalid port \"0\""},
		{bomb, "error: " + bomb + ":3: "},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			code, out, errOut := runGuarded(t, time.Minute, "simulate", "-f", "../../testdata/examples", "--requests", tt.file)
			if code != exitUsage || out != "" || !strings.HasPrefix(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q, want prefix %q", code, firstLine(out), errOut, tt.want)
			}
		})
	}
}

// TestHostileCEL: a CEL rule too expensive to evaluate is refused with a clear message:
// lint reports it (AGP305, not AGP301: the controller accepts it), explain stops it at
// the runtime budget and answers indeterminate, saying why.
func TestHostileCEL(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"00-namespaces.yaml", "10-gateway.yaml", "20-routes.yaml", "30-backends.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/examples", f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, f), data)
	}
	data, err := os.ReadFile("../../testdata/hostile/cli/expensive-cel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "40-expensive.yaml"), data)

	code, out, errOut := runGuarded(t, time.Minute, "lint", "-f", dir, "--only", "AGP301,AGP305", "--fail-on", "warning")
	if code != exitFail {
		t.Fatalf("lint: exit %d\n%s%s", code, out, errOut)
	}
	re := regexp.MustCompile(`40-expensive.yaml:21:\d+: warning AGP305 \[admission\] its estimated worst-case cost \d+ exceeds agpol's runtime budget of 1000000`)
	if !re.MatchString(out) || strings.Contains(out, "AGP301") {
		t.Errorf("lint output:\n%s", out)
	}

	start := time.Now()
	code, out, errOut = runGuarded(t, time.Minute, "explain", "-f", dir, "--from", "sa:agents/analytics", "--gateway", "infra/edge",
		"--backend", "tools/calc", "--tool", "add")
	// Evaluated until the runtime budget runs out, then unknown: indeterminate, not deny.
	if code != exitIndeterminate || !strings.Contains(out, "ran past agpol's runtime cost budget of 1000000") {
		t.Errorf("explain: exit %d\n%s%s", code, out, errOut)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("explain took %s: the expression was evaluated?", d)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
