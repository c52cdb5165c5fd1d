package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// The guides whose commands TestGuides runs, relative to the repository root.
var guides = []string{"docs/first-policy.md"}

// TestGuides keeps the guides in docs/ true to the binary. In a guide:
//
//   - a ```console block holds commands, each on a line starting with "$ " (continued
//     with a trailing backslash), followed by exactly what it prints (stdout and stderr
//     together, as a terminal shows them, piped width). Commands are `agpol ARGS…`, run
//     from the repository root, and `echo $?`, which prints the exit code of the agpol
//     before it;
//   - a fenced block right after a `<!-- file: PATH -->` line is the content of PATH;
//     every file of the guide's directory (docs/NAME/ for docs/NAME.md) must be shown.
//
// go test ./cmd/agpol -run TestGuides -update rewrites the output lines of the console
// blocks from what agpol prints now (file blocks are never rewritten: edit the file and
// the guide together).
func TestGuides(t *testing.T) {
	t.Chdir("../..")
	t.Setenv("NO_COLOR", "1")
	t.Setenv("TERM", "dumb")
	t.Setenv("COLUMNS", "")
	t.Setenv("KUBECONFIG", "/nonexistent")
	for _, guide := range guides {
		t.Run(filepath.Base(guide), func(t *testing.T) {
			src, err := os.ReadFile(guide)
			if err != nil {
				t.Fatal(err)
			}
			out, problems := checkGuide(t, guide, string(src))
			for _, p := range problems {
				t.Error(p)
			}
			if *update && out != string(src) {
				if err := os.WriteFile(guide, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if len(problems) > 0 {
				t.Log("regenerate the outputs with: go test ./cmd/agpol -run TestGuides -update")
			}
		})
	}
}

var fileMarker = regexp.MustCompile(`^<!-- file: (\S+) -->$`)

// checkGuide runs the guide's commands and compares the files it shows. It returns the
// guide with each console block's outputs as agpol prints them now, and every mismatch.
func checkGuide(t *testing.T, guide, src string) (string, []string) {
	lines := strings.SplitAfter(src, "\n")
	var out strings.Builder
	var problems []string
	shown := map[string]bool{}
	commands := 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\n")
		if m := fileMarker.FindStringSubmatch(line); m != nil {
			out.WriteString(lines[i])
			i++
			if i >= len(lines) || !strings.HasPrefix(lines[i], "```") {
				problems = append(problems, fmt.Sprintf("%s:%d: %s is not followed by a fenced block", guide, i, line))
				i--
				continue
			}
			start := i
			var body strings.Builder
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body.WriteString(lines[i])
			}
			for _, l := range lines[start:min(i+1, len(lines))] {
				out.WriteString(l)
			}
			want, err := os.ReadFile(m[1])
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", guide, start, err))
			} else if body.String() != string(want) {
				problems = append(problems, fmt.Sprintf("%s:%d: the block differs from %s:\n%s", guide, start+1, m[1], diffLines(body.String(), string(want), "file")))
			}
			shown[filepath.Clean(m[1])] = true
			continue
		}
		if line != "```console" {
			out.WriteString(lines[i])
			continue
		}
		out.WriteString(lines[i])
		// One console block: commands and the output each is expected to print.
		blockStart := i + 1
		var block []string
		for i++; i < len(lines) && strings.TrimRight(lines[i], "\n") != "```"; i++ {
			block = append(block, strings.TrimRight(lines[i], "\n"))
		}
		got, blockProblems := runConsole(t, block)
		commands++
		for _, p := range blockProblems {
			problems = append(problems, fmt.Sprintf("%s:%d: %s", guide, blockStart, p))
		}
		if want := strings.Join(block, "\n") + "\n"; got != want {
			problems = append(problems, fmt.Sprintf("%s:%d: the console block's output differs from agpol's:\n%s", guide, blockStart, diffLines(want, got, "agpol")))
		}
		out.WriteString(got)
		if i < len(lines) {
			out.WriteString(lines[i])
		}
	}
	if commands == 0 {
		problems = append(problems, guide+": no console block")
	}
	dir := strings.TrimSuffix(guide, ".md")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !shown[filepath.Clean(path)] {
			problems = append(problems, fmt.Sprintf("%s: %s is not shown (<!-- file: %s --> before a fenced block)", guide, path, path))
		}
		return err
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	return out.String(), problems
}

// runConsole runs the commands of a console block and returns the block as it should read:
// each command as written, then what it printed.
func runConsole(t *testing.T, block []string) (string, []string) {
	var out strings.Builder
	var problems []string
	lastCode := -1
	for j := 0; j < len(block); j++ {
		if !strings.HasPrefix(block[j], "$ ") {
			continue // expected output: replaced by what the command prints
		}
		cmdLine := strings.TrimPrefix(block[j], "$ ")
		out.WriteString(block[j] + "\n")
		for strings.HasSuffix(block[j], `\`) && j+1 < len(block) {
			j++
			out.WriteString(block[j] + "\n")
			cmdLine = strings.TrimSuffix(cmdLine, `\`) + " " + strings.TrimSpace(block[j])
		}
		args, err := splitWords(cmdLine)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%q: %v", cmdLine, err))
		case len(args) == 2 && args[0] == "echo" && args[1] == "$?":
			if lastCode < 0 {
				problems = append(problems, "echo $? before any agpol command")
			}
			out.WriteString(strconv.Itoa(lastCode) + "\n")
		case len(args) > 0 && args[0] == "agpol":
			var buf bytes.Buffer
			streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &buf, ErrOut: &buf}
			lastCode = run(context.Background(), append([]string{"agpol"}, args[1:]...), streams)
			out.Write(buf.Bytes())
		default:
			problems = append(problems, fmt.Sprintf("%q: a guide runs only agpol and echo $?", cmdLine))
		}
	}
	return out.String(), problems
}

// splitWords splits a command line into words as a POSIX shell does for the simple lines
// of a guide: blanks separate words, single and double quotes group (no expansion but $?).
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case strings.ContainsRune("|&;<>`*", rune(c)):
			return nil, fmt.Errorf("%c: a guide's commands are simple commands", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// diffLines shows the first lines where want and got part.
func diffLines(want, got, source string) string {
	n, wl, gl := difftest.FirstLineDiff(want, got)
	if n == 0 {
		return "(same lines)"
	}
	return fmt.Sprintf("line %d:\n  guide: %q\n  %s: %q", n, wl, source, gl)
}

// TestDocCitations keeps the rules' citations followable: code comments, lint --explain
// texts and docs cite docs/semantics.md#ANCHOR (an anchor that exists) or upstream, never
// sections of a document the repository does not hold.
func TestDocCitations(t *testing.T) {
	root := "../.."
	sem, err := os.ReadFile(filepath.Join(root, "docs/semantics.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllStringSubmatch(string(sem), -1) {
		anchors[m[1]] = true
	}
	// Written in pieces, so that this file does not match itself.
	section := "\u00a7"
	unfollowable := regexp.MustCompile("semantics " + section + "|" + section + "[0-9]|semantics-(agentic|kuadrant)[.]md|[(]D1?[0-9][)]|semantics[ ]D1?[0-9]\\b")
	cite := regexp.MustCompile(`docs/semantics\.md#([a-z0-9-]+)`)
	cited := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "bin" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := unfollowable.FindString(line); m != "" {
				t.Errorf("%s:%d: %q cites a document that is not in the repository: cite docs/semantics.md#ANCHOR or upstream", path, i+1, m)
			}
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				cited++
				if !anchors[m[1]] {
					t.Errorf("%s:%d: docs/semantics.md has no anchor %q", path, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no citation of docs/semantics.md found: is the walk reading the repository?")
	}
}
