package whatif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// InventoryAPIVersion and InventoryKind are the optional header of a tools inventory.
const (
	InventoryAPIVersion = "agpol.dev/v1alpha1"
	InventoryKind       = "ToolInventory"
)

// Inventory is the tools each backend serves, read from a --tools file (format in
// docs/tools-inventory.md): per backend, a saved MCP tools/list response.
type Inventory struct {
	// Tools maps a backend key ("NS/NAME" for an XBackend, "service/NS/NAME" for a core
	// Service) to its tool names, sorted and without duplicates.
	Tools map[string][]string
}

// InventoryKey is the key of a target's backend in an inventory.
func InventoryKey(backendKind, backend string) string {
	if backendKind == "Service" {
		return "service/" + backend
	}
	return backend
}

// ToolsOf returns the tools of a backend and whether the inventory lists it.
func (inv *Inventory) ToolsOf(backendKind, backend string) ([]string, bool) {
	if inv == nil {
		return nil, false
	}
	t, ok := inv.Tools[InventoryKey(backendKind, backend)]
	return t, ok
}

// InventoryError is a problem in an inventory file, at a line when known.
type InventoryError struct {
	File string
	Line int
	Msg  string
}

func (e *InventoryError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

type inventoryFile struct {
	APIVersion string                     `json:"apiVersion,omitempty"`
	Kind       string                     `json:"kind,omitempty"`
	Backends   map[string]json.RawMessage `json:"backends"`
}

// toolsList is a tools/list result, or a whole JSON-RPC response carrying one.
type toolsList struct {
	Tools      []toolEntry     `json:"tools"`
	NextCursor string          `json:"nextCursor,omitempty"`
	JSONRPC    string          `json:"jsonrpc,omitempty"`
	ID         json.RawMessage `json:"id,omitempty"`
	Result     *toolsList      `json:"result,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
}

type toolEntry struct {
	Name string `json:"name"`
}

// ParseInventory reads a tools inventory. Each backend's value is a tools/list result
// ({"tools": [{"name": ...}, ...]}), the whole JSON-RPC response ({"jsonrpc": "2.0",
// "id": 1, "result": {...}}), or a list of either (the pages of a paginated listing).
// Fields other than the tool names (description, inputSchema, annotations) are ignored.
func ParseInventory(name string, data []byte) (*Inventory, error) {
	fail := func(off int64, format string, args ...any) error {
		return &InventoryError{File: name, Line: lineOf(data, off), Msg: fmt.Sprintf(format, args...)}
	}
	var f inventoryFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fail(se.Offset, "invalid JSON: %v", err)
		case errors.As(err, &te):
			return nil, fail(te.Offset, "%s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return nil, fail(dec.InputOffset(), "%v", err)
	}
	if dec.More() {
		return nil, fail(dec.InputOffset(), "unexpected data after the inventory object")
	}
	if f.APIVersion != "" && f.APIVersion != InventoryAPIVersion {
		return nil, fail(-1, "apiVersion %q: use %s", f.APIVersion, InventoryAPIVersion)
	}
	if f.Kind != "" && f.Kind != InventoryKind {
		return nil, fail(-1, "kind %q: use %s", f.Kind, InventoryKind)
	}
	if f.Backends == nil {
		return nil, fail(-1, `no "backends" object: {"backends": {"NS/NAME": <tools/list result>}}`)
	}
	inv := &Inventory{Tools: map[string][]string{}}
	for key, raw := range f.Backends {
		off := int64(bytes.Index(data, []byte(fmt.Sprintf("%q", key))))
		if err := checkKey(key); err != nil {
			return nil, fail(off, "backend %q: %v", key, err)
		}
		var pages []toolsList
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) > 0 && trimmed[0] == '[' {
			if err := json.Unmarshal(raw, &pages); err != nil {
				return nil, fail(off, "backend %q: %v", key, err)
			}
		} else {
			var p toolsList
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fail(off, "backend %q: %v", key, err)
			}
			pages = []toolsList{p}
		}
		seen := map[string]bool{}
		tools := []string{}
		for i, p := range pages {
			if len(p.Error) > 0 && string(p.Error) != "null" {
				return nil, fail(off, "backend %q: page %d is a JSON-RPC error response, not a tools/list result", key, i+1)
			}
			if p.Result != nil {
				p = *p.Result
			}
			for j, t := range p.Tools {
				if strings.TrimSpace(t.Name) == "" {
					return nil, fail(off, "backend %q: tool %d has no name", key, j+1)
				}
				if !seen[t.Name] {
					seen[t.Name] = true
					tools = append(tools, t.Name)
				}
			}
		}
		sort.Strings(tools)
		inv.Tools[key] = tools
	}
	return inv, nil
}

func checkKey(key string) error {
	k := strings.TrimPrefix(key, "service/")
	ns, name, ok := strings.Cut(k, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return errors.New(`use "NAMESPACE/NAME" for an XBackend or "service/NAMESPACE/NAME" for a Service`)
	}
	return nil
}

func lineOf(data []byte, off int64) int {
	if off < 0 {
		return 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// Unknown returns the inventory keys that name no backend of the given set.
func (inv *Inventory) Unknown(known map[string]bool) []string {
	if inv == nil {
		return nil
	}
	var out []string
	for k := range inv.Tools {
		if !known[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
