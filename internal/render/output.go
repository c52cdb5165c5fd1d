package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/colorprofile"
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

// Table is rows of cells under a header: Write prints it with kubectl's printer (get),
// Text and Markdown with tablewriter (every other table).
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
			cells[i] = EscapeTerminal(c)
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

// ColorProfile decides once how output to w is coloured, and in what colour profile.
// The --color flag comes first: never is no styles, always is colour (in the profile
// TERM and COLORTERM name, at least ANSI). Then NO_COLOR (any non-empty value) and
// TERM=dumb turn styles off. Otherwise lipgloss's detection decides
// (colorprofile.Detect): styles only on a terminal, in the profile TERM, COLORTERM and
// terminfo name.
func ColorProfile(mode ColorMode, w io.Writer) colorprofile.Profile {
	switch mode {
	case ColorNever:
		return colorprofile.NoTTY
	case ColorAlways:
		return envProfile()
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return colorprofile.NoTTY
	}
	return colorprofile.Detect(w, os.Environ())
}

// UseColor reports whether output to w is styled; see ColorProfile.
func UseColor(mode ColorMode, w io.Writer) bool {
	return ColorProfile(mode, w) > colorprofile.NoTTY
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
