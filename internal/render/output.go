package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// Now is the clock used for AGE columns; tests pin it.
var Now = time.Now

// JSON writes v as indented JSON with a trailing newline. Field order follows the Go structs.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// YAML writes v as YAML (through its JSON form, so field names match -o json).
func YAML(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(data)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// Table is rows of cells under a header, printed kubectl style.
type Table struct {
	Header []string
	Rows   [][]string
}

// Write prints the table with kubectl's column layout (upper-case header, 3 spaces between
// columns, no trailing blanks). Untrusted cell text is escaped for the terminal.
func (t *Table) Write(w io.Writer, noHeaders bool) error {
	tw := printers.GetNewTabWriter(w)
	if !noHeaders {
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	}
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = printers.EscapeTerminal(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Age renders a creation time the way kubectl does ("5m", "3d"); unknown for zero times.
func Age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(Now().Sub(t))
}

// ColorMode is --color.
type ColorMode string

// Colour modes.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// UseColor decides once whether to colour output to w: never with NO_COLOR set (any
// non-empty value) or TERM=dumb, always with --color=always, otherwise only on a terminal.
func UseColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorNever:
		return false
	case ColorAlways:
		return true
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Join renders a list for a table cell, "<none>" when empty, like kubectl.
func Join(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	return strings.Join(items, ",")
}
