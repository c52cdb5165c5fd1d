package render

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Progress shows what a long command is doing, as kubectl and other terminal tools do:
// when a stage has run for a moment, one status line on stderr ("agpol: linting 18011
// objects… 4s"), rewritten in place as time passes and erased when the stage ends. It
// writes only to a terminal (never to a pipe, a file or a CI log, and not with
// TERM=dumb), so captured output stays clean. A zero or nil Progress writes nothing.
type Progress struct {
	w     io.Writer
	delay time.Duration // before the line first appears: fast stages show nothing
	every time.Duration // between rewrites
	now   func() time.Time

	mu    sync.Mutex
	stage *progressStage
}

type progressStage struct {
	msg   string
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// NewProgress returns a Progress writing to w when w is a terminal, else one that
// writes nothing.
func NewProgress(w io.Writer) *Progress {
	if os.Getenv("TERM") == "dumb" || !IsTerminal(w) {
		return &Progress{}
	}
	return &Progress{w: w, delay: 400 * time.Millisecond, every: time.Second, now: time.Now}
}

// Stage starts a stage described by msg (a verb phrase: "reading the cluster") and
// returns the function that ends it. A stage ends the one before it.
func (p *Progress) Stage(msg string) (end func()) {
	if p == nil || p.w == nil {
		return func() {}
	}
	p.end()
	st := &progressStage{msg: msg, start: p.now(), stop: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	p.stage = st
	p.mu.Unlock()
	go p.run(st)
	return p.end
}

// Stagef is Stage with a formatted message.
func (p *Progress) Stagef(format string, args ...any) (end func()) {
	return p.Stage(fmt.Sprintf(format, args...))
}

func (p *Progress) run(st *progressStage) {
	defer close(st.done)
	wait := time.NewTimer(p.delay)
	defer wait.Stop()
	shown := false
	for {
		select {
		case <-st.stop:
			if shown {
				fmt.Fprint(p.w, "\r"+ansi.EraseLineRight) // erase the status line
			}
			return
		case <-wait.C:
			shown = true
			fmt.Fprintf(p.w, "\r"+ansi.EraseLineRight+"agpol: %s… %ds", st.msg, int(p.now().Sub(st.start).Seconds()))
			wait.Reset(p.every)
		}
	}
}

// Stop ends the current stage, if any, erasing its line.
func (p *Progress) Stop() {
	if p != nil && p.w != nil {
		p.end()
	}
}

// end ends the current stage, if any, and waits until its line is erased.
func (p *Progress) end() {
	p.mu.Lock()
	st := p.stage
	p.stage = nil
	p.mu.Unlock()
	if st != nil {
		close(st.stop)
		<-st.done
	}
}
