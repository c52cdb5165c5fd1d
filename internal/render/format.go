package render

import (
	"fmt"
	"io"
)

// Format is an output format (-o): a command chooses it once, when its flags are
// parsed, and hands it to the render function of its view, which asks it what to
// write (kubectl's PrintFlags choose a printer the same way).
type Format string

// The output formats; each command accepts those its view has.
const (
	FormatText     Format = "text"
	FormatJSON     Format = "json"
	FormatYAML     Format = "yaml"
	FormatMarkdown Format = "markdown"
	FormatCSV      Format = "csv"
	FormatJUnit    Format = "junit"
	FormatSARIF    Format = "sarif"
	FormatGitHub   Format = "github"
)

// Document reports whether f writes one machine-readable document (json or yaml)
// instead of text.
func (f Format) Document() bool { return f == FormatJSON || f == FormatYAML }

// Encode writes v as the document f names: indented JSON for json, YAML (with the
// JSON field names) for yaml. Any other format is a bug in the caller.
func (f Format) Encode(w io.Writer, v any) error {
	switch f {
	case FormatJSON:
		return JSON(w, v)
	case FormatYAML:
		return YAML(w, v)
	}
	return fmt.Errorf("internal error: %q is not a document format", f)
}
