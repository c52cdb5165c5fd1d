// Syntax errors: naming the line of the mistake, which yaml/v3 often reports lines before it.
//
// A parser that keeps positions does not replace this: kyaml parses with yaml/v3, and
// goccy/go-yaml (v1.19.2) names another line than TestReadFilesErrors expects for 5
// of its 12 distinct malformed inputs (an unclosed bracket at the bracket, not where the input
// ends; an unknown anchor not at all, as it resolves aliases only when decoding).

package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
)

// yamlError turns a yaml/v3 syntax error in document doc of data into an InputError
// naming the line of the problem.
//
// yaml/v3 reports the line of the error's context (for example the start of the
// enclosing mapping) and counts it from 0 for parser errors, so its number is often
// one or more lines before the mistake, most visibly in documents after the first.
// yaml/v2 parses the same syntax with the same scanner but reports the problem's own
// position; errorLine re-parses with it (without building values, so aliases are not
// expanded) and corrects its 0-based parser lines.
func yamlError(name string, data []byte, doc int, err error) error {
	line, msg := splitYAMLError(err.Error())
	if l, ok := errorLine(data); ok {
		line = l
	} else if anchor, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		anchor = strings.TrimSuffix(anchor, "' referenced")
		line = lineContaining(data, documentStartLine(data, doc), "*"+anchor)
	}
	if line == 0 {
		line = documentStartLine(data, doc)
	}
	if l := lineText(data, line); strings.Contains(l[:len(l)-len(strings.TrimLeft(l, " \t"))], "\t") {
		msg += " (a tab indents this line: YAML indents with spaces only)"
	}
	return &InputError{File: name, Line: line, Err: fmt.Errorf("malformed YAML: %s", msg)}
}

// splitYAMLError splits "yaml: line 12: did not find expected key" into 12 and the rest.
func splitYAMLError(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil {
		return 0, msg
	}
	return n, strings.TrimPrefix(strings.TrimPrefix(rest[j:], ":"), " ")
}

// yamlParserErrors are the messages of yaml's parser (as opposed to its scanner):
// their line numbers are 0-based.
var yamlParserErrors = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// skipDoc parses a yaml/v2 document without building any value.
type skipDoc struct{}

func (skipDoc) UnmarshalYAML(func(any) error) error { return nil }

// errorLine returns the 1-based line of the first syntax error in data, as yaml/v2 locates it.
func errorLine(data []byte) (int, bool) {
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for {
		var d skipDoc
		err := dec.Decode(&d)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0, false
		}
		line, msg := splitYAMLError(err.Error())
		switch {
		case !yamlParserErrors[msg] && line > 0: // scanner errors are 1-based already
			return line, true
		case yamlParserErrors[msg]: // 0-based; no number means line 0
			return line + 1, true
		}
		return 0, false
	}
}

// documentStartLine approximates the first line of document doc (0-based) by counting
// "---" separators; it is only used when the parser names no line.
func documentStartLine(data []byte, doc int) int {
	lines := strings.Split(string(data), "\n")
	seps := []int{}
	content := -1 // first line with content, 0-based
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "---\t") {
			seps = append(seps, i)
			continue
		}
		if content < 0 && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			content = i
		}
	}
	if len(seps) > 0 && (content < 0 || seps[0] < content) {
		seps = seps[1:] // a leading "---" opens the first document
	}
	switch {
	case doc == 0 || len(seps) == 0:
		return 1
	case doc > len(seps):
		return seps[len(seps)-1] + 2
	}
	return seps[doc-1] + 2
}

// lineText returns line n (1-based) of data, or "".
func lineText(data []byte, n int) string {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 == n {
			return l
		}
	}
	return ""
}

// lineContaining returns the first line at or after from (1-based) that contains s, or from.
func lineContaining(data []byte, from int, s string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 >= from && strings.Contains(l, s) {
			return i + 1
		}
	}
	return from
}
