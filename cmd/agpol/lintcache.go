package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/agpol/agpol/internal/lint"
)

// cacheEnv turns the lint cache off when set to "off" (docs/lint-cache.md).
const cacheEnv = "AGPOL_CACHE"

// lintCache returns the lint cache under the user's cache directory
// (os.UserCacheDir()/agpol/lint), or nil when it is turned off (--no-cache,
// AGPOL_CACHE=off) or there is no cache directory or build key.
func lintCache(noCache bool, getenv func(string) string) *lint.Cache {
	switch strings.ToLower(getenv(cacheEnv)) {
	case "off", "0", "false":
		return nil
	}
	if noCache {
		return nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	build := buildKey()
	if build == "" {
		return nil
	}
	return lint.OpenCache(filepath.Join(dir, "agpol", "lint"), build)
}

// buildKey identifies this build of agpol for the lint cache: the module build info
// (revision, dependencies, build settings) of a build from a clean checkout, else the
// SHA-256 of the executable itself (a build with local changes, or without VCS
// information); "" when neither can be read.
func buildKey() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" && modified == "false" {
			return "buildinfo:" + bi.String()
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "executable:" + hex.EncodeToString(h.Sum(nil))
}
