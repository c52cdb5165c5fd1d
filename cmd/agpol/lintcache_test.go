package main

import "testing"

func TestLintCacheSwitch(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == cacheEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		noCache bool
		env     string
		on      bool
	}{{false, "", true}, {false, "on", true}, {true, "", false}, {false, "off", false}, {false, "OFF", false}, {false, "0", false}} {
		if got := lintCache(c.noCache, env(c.env)) != nil; got != c.on {
			t.Errorf("--no-cache=%v %s=%q: cache on %v, want %v", c.noCache, cacheEnv, c.env, got, c.on)
		}
	}
	if buildKey() == "" {
		t.Error("no build key")
	}
}
