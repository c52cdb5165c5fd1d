package main

import (
	"strings"
	"testing"
)

// TestDescribeGatewayListenerSet: describe gateway lists the listeners a ListenerSet adds,
// with the routes attached to them and the ListenerSet they come from.
func TestDescribeGatewayListenerSet(t *testing.T) {
	code, out, errOut := runAgpol(t, "describe", "gateway", "lsdemo/gw", "-f", "testdata/listenerset-live.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"lsdemo/extra/a   80     HTTP       a.example.com      -     none   1        True",
		"listener lsdemo/extra/a comes from ListenerSet lsdemo/extra"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
