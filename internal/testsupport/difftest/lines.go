package difftest

import "strings"

// FirstLineDiff finds the first line where two outputs part: its number (from 1) and
// each side's line ("" past an output's end); n is 0 when they are the same.
func FirstLineDiff(a, b string) (n int, lineA, lineB string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}
