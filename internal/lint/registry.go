package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Check is one lint check.
type Check struct {
	// Code is stable once published: "AGP" and three digits; the hundreds give the category.
	Code     string
	Severity Severity
	Category Category
	// Title is one line, lower case, no trailing period.
	Title string
	// Explanation says what the check finds and why it matters (plain text, paragraphs
	// separated by blank lines).
	Explanation string
	// Fix says how to fix a finding.
	Fix string
	// DataPlanes says which data planes the check applies to: AppliesToAll,
	// AppliesToAgentic or AppliesToKuadrant. Every check declares it.
	DataPlanes string
	// Run returns the check's findings. Code, Severity, Category, Title and (when empty)
	// Fix are filled in from the check.
	Run func(ctx *Context) []Finding
}

var (
	registry   = map[string]*Check{}
	codeFormat = regexp.MustCompile(`^AGP[0-9]{3}$`)
)

// categoryOfCode maps a code's hundreds digit to its category.
var categoryOfCode = map[byte]Category{
	'0': CategoryConfig, '1': CategorySchema, '2': CategoryReferences, '3': CategoryAdmission,
	'4': CategoryAllowAll, '5': CategoryLoss, '6': CategoryAmbiguity,
}

// Register adds a check. It panics on a malformed or duplicate check: registration
// happens in init functions, so a mistake fails every test at once.
func Register(c *Check) {
	if err := validCheck(c); err != nil {
		panic(fmt.Sprintf("lint: registering %s: %v", c.Code, err))
	}
	if _, dup := registry[c.Code]; dup {
		panic(fmt.Sprintf("lint: check %s registered twice", c.Code))
	}
	registry[c.Code] = c
}

func validCheck(c *Check) error {
	switch {
	case !codeFormat.MatchString(c.Code):
		return fmt.Errorf("code must look like AGP123")
	case c.Severity.rank() == 0:
		return fmt.Errorf("unknown severity %q", c.Severity)
	case categoryOfCode[c.Code[3]] != c.Category:
		return fmt.Errorf("category %q does not match the code's hundreds (%q)", c.Category, categoryOfCode[c.Code[3]])
	case c.Title == "" || strings.Contains(c.Title, "\n") || strings.HasSuffix(c.Title, "."):
		return fmt.Errorf("title must be one line without a trailing period")
	case strings.TrimSpace(c.Explanation) == "" || strings.TrimSpace(c.Fix) == "":
		return fmt.Errorf("explanation and fix are required")
	case c.Run == nil:
		return fmt.Errorf("no Run function")
	case dataPlaneText[c.DataPlanes] == "":
		return fmt.Errorf("data planes %q: use AppliesToAll, AppliesToAgentic or AppliesToKuadrant", c.DataPlanes)
	}
	return nil
}

// Checks returns every registered check, sorted by code.
func Checks() []*Check {
	out := make([]*Check, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// LookupCheck finds a check by code (case-insensitive).
func LookupCheck(code string) (*Check, bool) {
	c, ok := registry[strings.ToUpper(strings.TrimSpace(code))]
	return c, ok
}

// Selector picks checks by code or category (--only, --skip).
type Selector struct {
	Only []string
	Skip []string
}

// Select returns the checks the selector keeps, sorted by code. An unknown code or
// category is an error.
func (s Selector) Select() ([]*Check, error) {
	only, err := selectorSet(s.Only)
	if err != nil {
		return nil, fmt.Errorf("--only: %w", err)
	}
	skip, err := selectorSet(s.Skip)
	if err != nil {
		return nil, fmt.Errorf("--skip: %w", err)
	}
	for key := range only {
		if skip[key] {
			return nil, fmt.Errorf("--only %s and --skip %s contradict each other", key, key)
		}
	}
	var out []*Check
	for _, c := range Checks() {
		if len(only) > 0 && !only.matches(c) {
			continue
		}
		if skip.matches(c) {
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 { // nil would run every check
		return nil, fmt.Errorf("--only %s with --skip %s leaves no check to run", strings.Join(s.Only, ","), strings.Join(s.Skip, ","))
	}
	return out, nil
}

type selSet map[string]bool

func (s selSet) matches(c *Check) bool { return s[c.Code] || s[string(c.Category)] }

func selectorSet(items []string) (selSet, error) {
	out := selSet{}
	for _, it := range items {
		for _, x := range strings.Split(it, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			key, err := parseCodeOrCategory(x)
			if err != nil {
				return nil, err
			}
			out[key] = true
		}
	}
	return out, nil
}

// parseCodeOrCategory normalises a check code or a category name.
func parseCodeOrCategory(x string) (string, error) {
	if c, ok := LookupCheck(x); ok {
		return c.Code, nil
	}
	for _, cat := range Categories {
		if strings.EqualFold(x, string(cat)) {
			return string(cat), nil
		}
	}
	return "", fmt.Errorf("unknown check or category %q (categories: %s; codes: agpol lint --list)", x, categoryList())
}

func categoryList() string {
	names := make([]string, len(Categories))
	for i, c := range Categories {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
