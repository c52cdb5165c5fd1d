package kuadrantdiff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// OracleResult is the oracle's answer for one scenario (hack/kuadrant-oracle/io.go).
type OracleResult struct {
	Name     string          `json:"name"`
	Error    string          `json:"error,omitempty"`
	Paths    []OraclePath    `json:"paths"`
	Policies []OraclePolicy  `json:"policies"`
	Requests []OracleRequest `json:"requests"`
}

// OraclePath is kuadrant-operator's effective AuthPolicy of one path.
type OraclePath struct {
	ID                  string            `json:"id"`
	Rules               map[string]string `json:"rules"`
	Sources             []string          `json:"sources"`
	AuthConfig          string            `json:"authConfig,omitempty"`
	AuthConfigNamespace string            `json:"authConfigNamespace,omitempty"`
	Spec                json.RawMessage   `json:"spec,omitempty"`
	Predicates          []string          `json:"predicates,omitempty"`
}

// OraclePolicy is the status kuadrant-operator writes on one AuthPolicy.
type OraclePolicy struct {
	Policy     string      `json:"policy"`
	Conditions []Condition `json:"conditions"`
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// OracleRequest is what the data plane (wasm-shim stand-in, then Authorino) does with
// one request.
type OracleRequest struct {
	ActionSet   string `json:"actionSet,omitempty"`
	PathID      string `json:"pathID,omitempty"`
	AuthApplies bool   `json:"authApplies"`
	AuthConfig  string `json:"authConfig,omitempty"`
	Status      int    `json:"status"`
	Code        int    `json:"code"`
	Message     string `json:"message,omitempty"`
	Unsupported string `json:"unsupported,omitempty"`
	// Tied is what the data plane does with each path whose action set ties for the
	// request in kuadrant-operator's order: which one the wasm-shim runs is not fixed.
	Tied  []OracleRequest `json:"tied,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Oracle is one running kuadrant-oracle process; one goroutine uses it at a time.
type Oracle struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// oracleDir is hack/kuadrant-oracle, found from this source file's directory.
func oracleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "hack", "kuadrant-oracle")
}

// BuildOracle builds the oracle (its own Go module) once per test process; the go
// command's cache makes a rebuild quick. KUADRANT_ORACLE names a prebuilt binary.
func BuildOracle() (string, error) {
	buildOnce.Do(func() {
		if p := os.Getenv("KUADRANT_ORACLE"); p != "" {
			buildPath = p
			return
		}
		dir, err := os.MkdirTemp("", "kuadrant-oracle-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "kuadrant-oracle")
		cmd := exec.Command("go", "build", "-o", buildPath, ".")
		cmd.Dir = oracleDir()
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the oracle: %v\n%s", err, out)
		}
	})
	return buildPath, buildErr
}

// StartOracle starts an oracle process.
func StartOracle() (*Oracle, error) {
	bin, err := BuildOracle()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	return &Oracle{cmd: cmd, in: in, out: sc}, nil
}

// oracleInput is one scenario as the oracle reads it.
type oracleInput struct {
	Name     string    `json:"name"`
	Objects  []any     `json:"objects"`
	Requests []Request `json:"requests,omitempty"`
}

// Ask sends a scenario and reads the answer.
func (o *Oracle) Ask(sc *Scenario) (*OracleResult, error) {
	in := oracleInput{Name: sc.Name, Requests: sc.Requests}
	for _, x := range sc.Objects {
		in.Objects = append(in.Objects, x.Object)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	if !o.out.Scan() {
		return nil, fmt.Errorf("oracle exited: %v", o.out.Err())
	}
	res := &OracleResult{}
	if err := json.Unmarshal(o.out.Bytes(), res); err != nil {
		return nil, fmt.Errorf("oracle answer: %w", err)
	}
	return res, nil
}

// Close stops the process.
func (o *Oracle) Close() error {
	_ = o.in.Close()
	return o.cmd.Wait()
}
