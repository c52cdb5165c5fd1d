package render

import "io"

// CheckedWriter is the one place where an output's write errors are kept: the first
// error of any write is remembered (Err) and every later write fails with it, so output
// lost on a full disk or a closed stdout is reported by the command whatever the format
// or the renderer did with the error.
type CheckedWriter interface {
	io.Writer
	// Err is the first write error, or nil.
	Err() error
}

// NewCheckedWriter wraps w. The result still reports w's file descriptor (Fd), so
// terminal detection sees through it.
func NewCheckedWriter(w io.Writer) CheckedWriter {
	c := &checkedWriter{w: w}
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return checkedFile{c, f}
	}
	return c
}

type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *checkedWriter) Err() error { return c.err }

type checkedFile struct {
	*checkedWriter
	f interface{ Fd() uintptr }
}

func (c checkedFile) Fd() uintptr { return c.f.Fd() }
