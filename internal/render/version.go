package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/version"
)

// Version writes agpol's version: the Info as json or yaml, else one line.
func Version(w io.Writer, format Format, v version.Info) error {
	if format.Document() {
		return format.Encode(w, v)
	}
	_, err := fmt.Fprintf(w, "agpol %s (commit %s, built %s, %s)\n", v.Version, orUnknown(v.Commit), orUnknown(v.Date), v.GoVersion)
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
