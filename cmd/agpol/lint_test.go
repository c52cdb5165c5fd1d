package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/agpol/agpol/internal/lint"
	lintout "github.com/agpol/agpol/internal/render/lintout"
)

const lintData = "../../testdata/lint"

// runAgpol runs the command in-process and returns its exit code, stdout and stderr.
func runAgpol(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	code := run(context.Background(), append([]string{"agpol"}, args...), streams)
	return code, out.String(), errOut.String()
}

// TestLintExitCodes checks that every output format exits the same way: 0 below
// --fail-on, 1 at or above it, 2 for usage and input errors.
func TestLintExitCodes(t *testing.T) {
	base := lintData + "/base.yaml"
	dir := t.TempDir()
	brokenYAML := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(brokenYAML, []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(badConfig, []byte("suppressions:\n- code: AGP401\n  reason: r\n  expires: soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"clean input", []string{"-f", base}, exitOK},
		{"error finding", []string{"-f", base, "-f", lintData + "/checks/AGP401.yaml"}, exitFail},
		{"error finding, fail-on none", []string{"-f", base, "-f", lintData + "/checks/AGP401.yaml", "--fail-on", "none"}, exitOK},
		{"error finding skipped", []string{"-f", base, "-f", lintData + "/checks/AGP401.yaml", "--skip", "allow-all"}, exitOK},
		{"warning below threshold", []string{"-f", base, "-f", lintData + "/checks/AGP404.yaml"}, exitOK},
		{"warning at threshold", []string{"-f", base, "-f", lintData + "/checks/AGP404.yaml", "--fail-on", "warning"}, exitFail},
		{"info at threshold", []string{"-f", base, "-f", lintData + "/checks/AGP405.yaml", "--fail-on", "info", "--only", "AGP405"}, exitFail},
		{"undecodable object is a finding, not an input error", []string{"-f", base, "-f", lintData + "/checks/AGP101.yaml"}, exitFail},
		{"suppressed error", []string{"-f", base, "-f", lintData + "/checks/AGP003.yaml", "--config", lintData + "/checks/AGP003.config", "--fail-on", "info", "--only", "AGP405"}, exitOK},
		{"unknown --fail-on", []string{"-f", base, "--fail-on", "fatal"}, exitUsage},
		{"unknown --only", []string{"-f", base, "--only", "AGP999"}, exitUsage},
		{"missing file", []string{"-f", filepath.Join(dir, "missing.yaml")}, exitUsage},
		{"malformed YAML", []string{"-f", brokenYAML}, exitUsage},
		{"missing explicit config", []string{"-f", base, "--config", filepath.Join(dir, "none.yaml")}, exitUsage},
		{"malformed config", []string{"-f", base, "--config", badConfig}, exitUsage},
		{"unknown flag", []string{"-f", base, "--fial-on", "error"}, exitUsage},
		{"--live without -f is a usage error", []string{"--live"}, exitUsage},
		{"files as arguments", []string{base, lintData + "/checks/AGP401.yaml"}, exitFail},
		{"files as arguments and -f", []string{"-f", base, lintData + "/checks/AGP404.yaml"}, exitOK},
		{"missing file as argument", []string{filepath.Join(dir, "missing.yaml")}, exitUsage},
	}
	for _, f := range lintout.Formats {
		format := string(f)
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				args := append([]string{"lint", "-o", format}, tt.args...)
				code, stdout, stderr := runAgpol(t, args...)
				if code != tt.want {
					t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.want, stdout, stderr)
				}
				if code == exitUsage && stdout != "" {
					t.Errorf("usage error printed a report: %s", stdout)
				}
				if code != exitUsage && stdout == "" {
					t.Error("no report printed")
				}
			})
		}
	}
	if code, _, stderr := runAgpol(t, "lint", "-o", "xml", "-f", base); code != exitUsage || !strings.Contains(stderr, `unknown output format "xml"`) {
		t.Errorf("-o xml: exit %d, stderr %s", code, stderr)
	}
}

func TestLintOutputIsDeterministic(t *testing.T) {
	args := []string{"lint", "-f", lintData + "/base.yaml", "-f", lintData + "/checks", "-o", "json", "--show-suppressed"}
	_, first, _ := runAgpol(t, args...)
	for range 3 {
		if _, again, _ := runAgpol(t, args...); again != first {
			t.Fatal("two runs printed different reports")
		}
	}
	if !strings.Contains(first, `"code": "AGP502"`) {
		t.Error("the report of all fixtures lacks AGP502")
	}
}

func TestLintExplainAndList(t *testing.T) {
	code, out, _ := runAgpol(t, "lint", "--explain", "agp401")
	if code != exitOK || !strings.HasPrefix(out, "AGP401: rule source matches any caller\n") || !strings.Contains(out, "Fix:") {
		t.Errorf("--explain: exit %d\n%s", code, out)
	}
	if code, _, stderr := runAgpol(t, "lint", "--explain", "AGP999"); code != exitUsage || !strings.Contains(stderr, "unknown check") {
		t.Errorf("--explain AGP999: exit %d, %s", code, stderr)
	}
	code, out, _ = runAgpol(t, "lint", "--list")
	if code != exitOK || !strings.HasPrefix(out, "CODE ") {
		t.Fatalf("--list: exit %d\n%s", code, out)
	}
	for _, c := range lint.Checks() {
		if !strings.Contains(out, c.Code+"   ") {
			t.Errorf("--list lacks %s", c.Code)
		}
	}
}

func TestLintText(t *testing.T) {
	code, out, _ := runAgpol(t, "lint", "-f", lintData+"/base.yaml", "-f", lintData+"/checks/AGP401.yaml", "--only", "AGP401")
	want := lintData + "/checks/AGP401.yaml:14:5: error AGP401 [allow-all] rule \"type-without-field\": source has type ServiceAccount without serviceAccount"
	if code != exitFail || !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\n3 errors, 0 warnings, 0 info\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestLoadLintConfig(t *testing.T) {
	dir := t.TempDir()
	if cfg, err := loadConfig(filepath.Join(dir, ".agpol.yaml"), false); cfg != nil || err != nil {
		t.Errorf("absent default config: %v %v", cfg, err)
	}
	if _, err := loadConfig(filepath.Join(dir, ".agpol.yaml"), true); err == nil {
		t.Error("absent explicit config accepted")
	}
	p := filepath.Join(dir, ".agpol.yaml")
	if err := os.WriteFile(p, []byte("suppressions:\n- {code: AGP405, reason: ok}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(p, false)
	if err != nil || cfg == nil || len(cfg.Suppressions) != 1 {
		t.Errorf("present default config: %v %v", cfg, err)
	}
}

// TestLintArgsAreFiles checks that arguments are read like -f, and that .agpol.yaml in
// the current directory suppresses their findings: how the pre-commit hook runs agpol.
func TestLintArgsAreFiles(t *testing.T) {
	abs, err := filepath.Abs(lintData)
	if err != nil {
		t.Fatal(err)
	}
	base, finding := filepath.Join(abs, "base.yaml"), filepath.Join(abs, "checks", "AGP401.yaml")
	code, out, _ := runAgpol(t, "lint", "--only", "AGP401", base, finding)
	if code != exitFail || !strings.Contains(out, "checks/AGP401.yaml:14:5: error AGP401") {
		t.Fatalf("files as arguments: exit %d\n%s", code, out)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile(".agpol.yaml", []byte("suppressions:\n- {code: AGP401, reason: tested}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAgpol(t, "lint", "--only", "AGP401", base, finding)
	if code != exitOK || !strings.HasSuffix(out, "0 errors, 0 warnings, 0 info, 3 suppressed\n") {
		t.Errorf("with .agpol.yaml in the current directory: exit %d\n%s", code, out)
	}
}
