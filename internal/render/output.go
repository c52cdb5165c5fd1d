package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
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
	return t.WriteFit(w, noHeaders, 0)
}

// WriteFit is Write fitting width columns (0: no limit) as gh fits its tables to a
// terminal: the widest column that is not the first, NAMESPACE or NAME gives way first, down to
// its header, and its cells are cut with charmbracelet/x/ansi's Truncate, ending in
// "…". Names are never cut; a table that cannot fit even so is printed wider.
func (t *Table) WriteFit(w io.Writer, noHeaders bool, width int) error {
	rows := make([][]string, len(t.Rows))
	for k, r := range t.Rows {
		rows[k] = make([]string, len(r))
		for i, c := range r {
			rows[k][i] = EscapeTerminal(c)
		}
	}
	if widths := truncatedWidths(t.Header, rows, width); widths != nil {
		for _, r := range rows {
			for i, c := range r {
				if i < len(widths) && ansi.StringWidth(c) > widths[i] {
					r[i] = ansi.Truncate(c, widths[i], "…")
				}
			}
		}
	}
	tw := printers.GetNewTabWriter(w)
	if !noHeaders {
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// kubectl's tabwriter (printers.GetNewTabWriter): a column is its widest cell and
// three blanks, at least six.
const (
	tabPadding  = 3
	tabMinWidth = 6
)

// truncatedWidths returns the widths the cells of each column are cut to for the
// table to fit width columns, or nil when it fits (or width is 0, or nothing can give
// way). The first column and the NAMESPACE and NAME columns never give way; the others give way widest first,
// down to their header's width.
func truncatedWidths(header []string, rows [][]string, width int) []int {
	if width <= 0 {
		return nil
	}
	widths, floor := make([]int, len(header)), make([]int, len(header))
	for i, h := range header {
		widths[i] = ansi.StringWidth(h)
		floor[i] = widths[i]
		if i == 0 || h == "NAMESPACE" || h == "NAME" {
			floor[i] = -1 // fixed below
		}
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], ansi.StringWidth(c))
			}
		}
	}
	for i := range floor {
		if floor[i] < 0 {
			floor[i] = widths[i]
		}
	}
	total := func() int {
		n := 0
		for i, w := range widths {
			if i == len(widths)-1 {
				n += w
			} else {
				n += max(w+tabPadding, tabMinWidth)
			}
		}
		return n
	}
	if !shrinkWidest(widths, floor, total, width) {
		return nil
	}
	return widths
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
