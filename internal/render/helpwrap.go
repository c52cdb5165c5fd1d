package render

import "strings"

// The pieces of a command's --help that are not prose (Reflow's part): the usage line,
// the list of subcommands and the examples, each fitted to a width.

// WrapHanging returns line broken at spaces into lines of at most width columns, each
// continuation indented hang columns more than line (a word longer than a line stays
// whole): a usage line, or a subcommand and its one-line summary.
func WrapHanging(line string, width, hang int) string {
	return wrapHang(line, width, hang)
}

// WrapExamples fits the examples of a command's help into width columns: a comment line
// ("# …") continues as a comment; a command line is broken between shell words, each
// broken line ending in " \" and continued four columns further in, so that every example
// can still be pasted into a shell. Quoted words, and a flag with its value, stay whole. Lines that fit are kept.
func WrapExamples(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for _, l := range lines {
		if markedWidth(l) <= width {
			out = append(out, l)
			continue
		}
		body := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(body)]
		if strings.HasPrefix(body, "#") {
			text := strings.TrimLeft(strings.TrimPrefix(body, "#"), " ")
			for i, w := range strings.Split(wrapHang(lead+"# "+text, width, 2), "\n") {
				if i > 0 { // continued two columns in: those two columns become "# "
					w = lead + "# " + strings.TrimPrefix(w, lead+"  ")
				}
				out = append(out, w)
			}
			continue
		}
		out = append(out, wrapShell(lead, body, width)...)
	}
	return strings.Join(out, "\n")
}

// wrapShell breaks the shell command body (indented by lead) between its words.
func wrapShell(lead, body string, width int) []string {
	trailing := strings.HasSuffix(body, " \\")
	words := flagsWithValues(shellWords(strings.TrimSuffix(body, " \\")))
	var out []string
	cur, indent := lead, lead
	first := true
	for _, w := range words {
		switch {
		case first:
			cur += w
			first = false
		case markedWidth(cur)+1+markedWidth(w)+2 > width:
			out = append(out, cur+" \\")
			indent = lead + "    "
			cur = indent + w
		default:
			cur += " " + w
		}
	}
	if trailing {
		cur += " \\"
	}
	return append(out, cur)
}

// flagsWithValues keeps a flag and the word after it (its value, unless it is a flag)
// together, so that a break never parts them.
func flagsWithValues(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			w += " " + words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// shellWords splits s at spaces outside single and double quotes.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ':
			if b.Len() > 0 {
				words = append(words, b.String())
				b.Reset()
			}
			continue
		}
		b.WriteRune(r)
	}
	if b.Len() > 0 {
		words = append(words, b.String())
	}
	return words
}
