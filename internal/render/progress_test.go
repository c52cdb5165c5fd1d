package render

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgress(t *testing.T) {
	// Not a terminal: nothing, whatever happens.
	var pipe bytes.Buffer
	p := NewProgress(&pipe)
	end := p.Stage("linting")
	time.Sleep(10 * time.Millisecond)
	end()
	if pipe.Len() != 0 {
		t.Errorf("wrote %q to a non-terminal", pipe.String())
	}
	var nilP *Progress
	nilP.Stage("x")()

	// A terminal (forced): a slow stage shows its line and erases it; a fast one shows nothing.
	var term syncBuffer
	p = &Progress{w: &term, delay: 20 * time.Millisecond, every: 10 * time.Millisecond, now: time.Now}
	p.Stage("reading the cluster")() // ends before the delay
	if term.String() != "" {
		t.Errorf("a fast stage wrote %q", term.String())
	}
	end = p.Stagef("linting %d objects", 3)
	time.Sleep(80 * time.Millisecond)
	p.Stage("rendering")() // a new stage ends the one before
	end()                  // ending twice is harmless
	out := term.String()
	if !strings.Contains(out, "\r\033[Kagpol: linting 3 objects… 0s") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("terminal output %q: want the status line, then erased", out)
	}
	if strings.Contains(out, "rendering") {
		t.Errorf("a fast stage after a slow one wrote: %q", out)
	}
}
