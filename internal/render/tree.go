package render

import (
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/tree"
)

// node is one item of a text tree (explain's trace, describe's chains): its text,
// which may hold a Styler's styles, and its children.
type node struct {
	text     string
	children []*node
}

// add appends a child with text and returns it.
func (n *node) add(text string) *node {
	c := &node{text: text}
	n.children = append(n.children, c)
	return c
}

// branchWidth is the width a level of the tree adds: a branch ("├── ") or the line
// under one ("│   ").
const branchWidth = 4

// writeTree writes root as a lipgloss tree whose lines start with indent: root's text
// on the first line (none when it is empty; continuation lines two columns further),
// then its children under branches.
// Every item is wrapped so that no line is wider than TextWidth columns (where the
// words allow it); an item's continuation lines stand under its first word, behind
// the branch line of the tree. The branches are plain: only item text is styled.
func writeTree(w io.Writer, indent string, root *node) {
	width := TextWidth - len(indent)
	t := tree.New().
		Enumerator(tree.DefaultEnumerator).
		Indenter(tree.DefaultIndenter).
		EnumeratorStyle(lipgloss.NewStyle().PaddingRight(1)).
		IndenterStyle(lipgloss.NewStyle().PaddingRight(1)).
		ItemStyle(plain)
	if root.text != "" {
		t.Root(closeStylesPerLine(wrapHang(root.text, width, 2)))
	}
	for _, c := range root.children {
		t.Child(treeChild(c, width-branchWidth))
	}
	for _, l := range strings.Split(t.String(), "\n") {
		// lipgloss pads the lines of a multi-line item to one width: drop the blanks.
		fmt.Fprintln(w, strings.TrimRight(indent+l, " "))
	}
}

// treeChild is n as a lipgloss tree node whose text fits width columns.
func treeChild(n *node, width int) any {
	text := treeItem(n.text, width)
	if len(n.children) == 0 {
		return text
	}
	t := tree.Root(text)
	for _, c := range n.children {
		t.Child(treeChild(c, width-branchWidth))
	}
	return t
}

// treeItem is text wrapped to width columns, continuation lines not indented, each
// line closing the styles it opens so that the branches between lines stay plain.
func treeItem(text string, width int) string {
	return closeStylesPerLine(wrapHang(text, width, 0))
}

// closeStylesPerLine ends the styles open at the end of each line of s and opens them
// again at the start of the next.
func closeStylesPerLine(s string) string {
	if !strings.Contains(s, "\n") || strings.IndexByte(s, styleMark) < 0 {
		return s
	}
	var b strings.Builder
	var open []byte
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
			for _, c := range open {
				b.Write([]byte{styleMark, c})
			}
		}
		b.WriteString(l)
		for j := 0; j+1 < len(l); j++ {
			if l[j] != styleMark {
				continue
			}
			if c := l[j+1]; c == styleEnd {
				if len(open) > 0 {
					open = open[:len(open)-1]
				}
			} else {
				open = append(open, c)
			}
			j++
		}
		for range open {
			b.Write([]byte{styleMark, styleEnd})
		}
	}
	return b.String()
}
