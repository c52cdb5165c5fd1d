package render

import (
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/colorprofile"

	"github.com/agpol/agpol/internal/explain"
)

// Styler applies styles when colour is on and is the identity otherwise. What it
// styles must be written through a TerminalWriter (Writer), which renders the styles
// with lipgloss in the colour profile.
type Styler struct {
	Color bool
	// Profile is the colour profile the styles are rendered in when Color is set
	// (ColorProfile decides it); Unknown means the one the environment names.
	Profile colorprofile.Profile
}

// Writer is w escaped for a terminal, with this Styler's styles.
func (s Styler) Writer(w io.Writer) io.Writer {
	p := colorprofile.NoTTY
	if s.Color {
		p = s.Profile
		if p == colorprofile.Unknown {
			p = envProfile()
		}
	}
	return newTerminalWriter(w, p)
}

// wrap marks text with the style named code (see styleMark).
func (s Styler) wrap(code byte, text string) string {
	if !s.Color || text == "" {
		return text
	}
	return string([]byte{styleMark, code}) + text + string([]byte{styleMark, styleEnd})
}

// Bold, Dim, Red, Green, Yellow and Cyan style text.
func (s Styler) Bold(t string) string   { return s.wrap(styleBold, t) }
func (s Styler) Dim(t string) string    { return s.wrap(styleDim, t) }
func (s Styler) Red(t string) string    { return s.wrap(styleRed, t) }
func (s Styler) Green(t string) string  { return s.wrap(styleGreen, t) }
func (s Styler) Yellow(t string) string { return s.wrap(styleYellow, t) }
func (s Styler) Cyan(t string) string   { return s.wrap(styleCyan, t) }

// Verdict renders ALLOW / DENY (explicit|implicit) / INDETERMINATE, coloured.
func (s Styler) Verdict(d *explain.Decision) string {
	v := strings.ToUpper(d.Verdict)
	if k := d.DenyKind(); k != "" {
		v += " (" + k + ")"
	}
	switch d.Verdict {
	case explain.Allow:
		return s.Bold(s.Green(v))
	case explain.Deny:
		return s.Bold(s.Red(v))
	}
	return s.Bold(s.Yellow(v))
}

// envProfile is the colour profile the environment names (TERM, COLORTERM, as
// lipgloss's colorprofile reads them) for output that is to be coloured: at least
// ANSI, since the decision to colour is already taken.
func envProfile() colorprofile.Profile {
	return max(colorprofile.Env(os.Environ()), colorprofile.ANSI)
}
