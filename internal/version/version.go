// Package version reports agpol's build version. Release builds set the variables
// with -ldflags -X; `go install` builds fall back to the module build info.
package version

import "runtime/debug"

// Set by -ldflags "-X github.com/agpol/agpol/internal/version.version=..." in releases.
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info is the version report.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Get returns the build's version information.
func Get() Info {
	i := Info{Version: version, Commit: commit, Date: date}
	if bi, ok := debug.ReadBuildInfo(); ok {
		i.GoVersion = bi.GoVersion
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && i.Commit == "":
				i.Commit = s.Value
			case s.Key == "vcs.time" && i.Date == "":
				i.Date = s.Value
			}
		}
	}
	if i.Version == "" {
		i.Version = "dev"
	}
	return i
}
