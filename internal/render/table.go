package render

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwarp"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Text prints the table with tablewriter, borderless and close to kubectl's look
// (left-aligned, three spaces between columns, no trailing blanks), its cells
// wrapped at spaces so that no line is wider than width columns (0: no limit) where
// the words allow it (see fitColumns); no header line when Header is empty. Untrusted
// cell text is escaped for the terminal. kubectl-style get tables use Write instead.
func (t *Table) Text(w io.Writer, width int) error {
	rows := make([][]string, len(t.Rows))
	for k, r := range t.Rows {
		rows[k] = make([]string, len(r))
		for i, c := range r {
			rows[k][i] = EscapeTerminal(c)
		}
	}
	widths, gap := fitColumns(t.Header, rows, width)
	if widths != nil {
		breakLongWords(rows, widths)
	}
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbolCustom("agpol").WithColumn(strings.Repeat(" ", gap)),
			Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.Separators{BetweenColumns: tw.On}},
		})),
		tablewriter.WithPadding(tw.PaddingNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
	}
	if widths != nil {
		opts = append(opts, tablewriter.WithColumnWidths(widths))
	}
	var b bytes.Buffer
	tab := tablewriter.NewTable(&b, opts...)
	if len(t.Header) > 0 {
		tab.Header(t.Header)
	}
	if err := tab.Bulk(rows); err != nil {
		return err
	}
	if err := tab.Render(); err != nil {
		return err
	}
	_, err := w.Write(trimTrailingBlanks(b.Bytes()))
	return err
}

// indentedText is Text fitting TextWidth with indent before each line.
func (t *Table) indentedText(w io.Writer, indent string) error {
	var b bytes.Buffer
	if err := t.Text(&b, TextWidth-len(indent)); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if l != "" {
			if _, err := io.WriteString(w, indent+l); err != nil {
				return err
			}
		}
	}
	return nil
}

// Markdown prints the table as a GitHub-flavoured markdown table with tablewriter's
// markdown renderer. Cell text is escaped for markdown (| < > and line breaks) and
// for the terminal.
func (t *Table) Markdown(w io.Writer) error {
	esc := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = mdEscape(EscapeTerminal(c))
		}
		return out
	}
	tab := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tab.Header(esc(t.Header))
	for _, r := range t.Rows {
		if err := tab.Append(esc(r)); err != nil {
			return err
		}
	}
	return tab.Render()
}

// mdEscape makes text from the input inert in a markdown table cell or heading (GitHub
// Flavored Markdown, where both hold inline content only): a pipe cannot end the cell;
// the characters that open inline constructs (links and images, emphasis, code spans,
// strikethrough, HTML, entities) are escaped, as CommonMark lets any ASCII punctuation
// be; an @ is followed by a zero-width space so no user or team is mentioned.
func mdEscape(s string) string { return mdEscaper.Replace(s) }

var mdEscaper = strings.NewReplacer(
	"|", `\|`, "\\", `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`, "`", "\\`", "~", `\~`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "@", "@&#8203;", "\n", " ",
)

// columnGap is the width between two columns, as kubectl's; narrowColumnGap when
// the table cannot fit otherwise.
const (
	columnGap       = 3
	narrowColumnGap = 2
)

// minBrokenColumn is the narrowest a column whose words are broken gets (unless its
// header or its cells are narrower).
const minBrokenColumn = 8

// fitColumns returns the gap between columns and the column widths that make the
// table at most width columns wide (nil when it fits as it is, or width is 0). The
// widest column gives way first, down to its longest word (or header); when the
// table cannot fit with three spaces between columns it takes two, and when it cannot
// fit without breaking words, the widest column gives way again (the first column
// last), down to its header's longest word or minBrokenColumn, and breakLongWords breaks the words that no
// longer fit (as gh and lipgloss's tables do: the table keeps its shape). Only when
// even that is too wide is the table wider than width.
func fitColumns(header []string, rows [][]string, width int) (tw.Mapper[int, int], int) {
	n := len(header)
	for _, r := range rows {
		n = max(n, len(r))
	}
	natural, floor, broken := make([]int, n), make([]int, n), make([]int, n)
	for i, h := range header {
		natural[i], floor[i] = twwidth.Width(h), twwidth.Width(h)
		for _, word := range strings.Fields(h) {
			broken[i] = max(broken[i], twwidth.Width(word))
		}
	}
	for _, r := range rows {
		for i, c := range r {
			if i >= n {
				break
			}
			natural[i] = max(natural[i], twwidth.Width(c))
			for _, word := range strings.Fields(c) {
				floor[i] = max(floor[i], twwidth.Width(word))
			}
		}
	}
	sum := func(ws []int, gap int) int {
		total := gap * (n - 1)
		for _, w := range ws {
			total += w
		}
		return total
	}
	gap := columnGap
	if width <= 0 || sum(natural, gap) <= width {
		return nil, gap
	}
	if sum(floor, gap) > width {
		gap = narrowColumnGap
	}
	widths := slices.Clone(natural)
	shrink := func(floor []int) {
		shrinkWidest(widths, floor, func() int { return sum(widths, gap) }, width)
	}
	shrink(floor)
	if sum(widths, gap) > width {
		for i := range broken {
			broken[i] = min(natural[i], max(broken[i], minBrokenColumn))
		}
		// The first column (what the row is about) keeps its words longest.
		first := broken[0]
		broken[0] = floor[0]
		shrink(broken)
		broken[0] = first
		shrink(broken)
	}
	m := tw.NewMapper[int, int]()
	for i, w := range widths {
		m.Set(i, w)
	}
	return m, gap
}

// breakLongWords wraps each cell with a word wider than its column (breakCell); the
// cells that fit word by word are left to tablewriter's word wrap.
func breakLongWords(rows [][]string, widths tw.Mapper[int, int]) {
	for _, r := range rows {
		for i, c := range r {
			w, ok := widths.OK(i)
			if !ok || w <= 0 {
				continue
			}
			for _, word := range strings.Fields(c) {
				if twwidth.Width(word) > w {
					r[i] = breakCell(c, w)
					break
				}
			}
		}
	}
}

// breakCell wraps c in lines of at most w columns: at spaces first, as tablewriter
// wraps (twwarp, words whole), then the lines still too wide (a long name) with Wrap, which breaks
// a word after a hyphen, a slash, a '#' or a dot when it can and anywhere when it must.
func breakCell(c string, w int) string {
	lines, _ := twwarp.WrapString(c, w)
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Wrap(l, w, "/#.")
		}
	}
	return strings.Join(lines, "\n")
}

// trimTrailingBlanks drops the blanks tablewriter pads the last column with.
func trimTrailingBlanks(p []byte) []byte {
	lines := bytes.Split(p, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

// shrinkWidest narrows the widest column that can still give way (down to its floor), one
// cell at a time, until total() fits width or no column can give way; it reports whether
// any column narrowed.
func shrinkWidest(widths, floor []int, total func() int, width int) bool {
	changed := false
	for total() > width {
		k := -1
		for i, w := range widths {
			if w > floor[i] && (k < 0 || w > widths[k]) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		widths[k]--
		changed = true
	}
	return changed
}
