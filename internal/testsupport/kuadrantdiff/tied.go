package kuadrantdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/explain"
)

// compareTied compares a request for which the action sets of several paths tie in
// kuadrant-operator's order and all match (up.Tied: what the data plane does when it
// runs each), so which one the wasm-shim runs is not fixed. agpol's path must be one of
// them and agpol must name the others (AuthPolicyInfo.Tied); when they answer
// differently (allow against deny) agpol must say indeterminate; when they answer the
// same, agpol's verdict is compared as any other (and must not say they differ). It
// returns the oracle's answer for agpol's path, whether every tied path answers with the
// same status, and whether the comparison goes on (the `when`, verdict and status).
func compareTied(rep *Report, i int, rq Request, r *explain.Request, up OracleRequest, ap *explain.AuthPolicyInfo, verdict string, sim *explain.Simulator, disagree func(string, int, Request, string, ...any)) (OracleRequest, bool, bool) {
	agpolHas := ap != nil && ap.Evaluation != nil && ap.Unprogrammed == nil
	var ids []string
	var own *OracleRequest
	for k := range up.Tied {
		ids = append(ids, up.Tied[k].PathID)
		if agpolHas && strings.HasSuffix(up.Tied[k].PathID, pathTail(ap.Path)) {
			own = &up.Tied[k]
		}
	}
	if own == nil {
		rep.count(&rep.Compared, KindSelection)
		mine := "no AuthPolicy"
		if agpolHas {
			mine = "the AuthPolicy of " + ap.Path
		}
		disagree(KindSelection, i, rq, "agpol applies %s, the wasm-shim stand-in one of the tied paths %s", mine, strings.Join(ids, ", "))
		return up, false, false
	}
	rep.count(&rep.Compared, KindTied)
	if !sameTied(ids, ap) {
		disagree(KindTied, i, rq, "the wasm-shim stand-in's tied paths are %s, agpol's %s", strings.Join(ids, ", "), tiedPaths(ap))
		return up, false, false
	}
	classes, statuses := map[bool]bool{}, map[int]bool{}
	for _, t := range up.Tied {
		if t.Error != "" {
			disagree(KindVerdict, i, rq, "the oracle could not decide %s: %s", t.PathID, t.Error)
			return up, false, false
		}
		if t.Unsupported != "" {
			rep.count(&rep.Skipped, "oracle: "+t.Unsupported)
			return up, false, false
		}
		classes[t.Status == 200] = true
		statuses[t.Status] = true
	}
	if len(classes) > 1 {
		rep.count(&rep.Compared, KindVerdict+" (tied paths answer differently)")
		if verdict != explain.Indeterminate {
			disagree(KindVerdict, i, rq, "the tied paths answer differently (%s), agpol %s", tiedAnswers(up.Tied), verdict)
		}
		return up, false, false
	}
	if verdict == explain.Indeterminate && tiedContradict(sim, r) {
		disagree(KindVerdict, i, rq, "every tied path answers the same (%s), agpol allows on one and denies on another", tiedAnswers(up.Tied))
		return up, false, false
	}
	return *own, len(statuses) == 1, true
}

// sameTied reports whether agpol's path and its tied ones are the oracle's tied paths.
func sameTied(ids []string, ap *explain.AuthPolicyInfo) bool {
	mine := []string{pathTail(ap.Path)}
	for _, t := range ap.Tied {
		mine = append(mine, pathTail(t.Path))
	}
	if len(mine) != len(ids) {
		return false
	}
	for _, id := range ids {
		found := false
		for _, m := range mine {
			found = found || strings.HasSuffix(id, m)
		}
		if !found {
			return false
		}
	}
	return true
}

// tiedContradict reports whether agpol's traced answer to r is indeterminate because
// one tied path allows and another denies (explain.CauseAuthPolicyTied); a tied path
// whose answer agpol cannot know offline leaves it indeterminate too, as any other.
func tiedContradict(sim *explain.Simulator, r *explain.Request) bool {
	res, err := sim.Explain(explain.Options{Trace: true, AuthPolicy: true}, r)
	if err != nil {
		return false
	}
	for _, x := range res {
		if x.Cause == nil || x.Cause.Event != explain.CauseAuthPolicyTied || x.Cause.AuthPolicy == nil {
			continue
		}
		seen := map[string]bool{}
		for _, a := range x.Cause.AuthPolicy.Tied {
			seen[a.Verdict] = true
		}
		if seen[explain.Allow] && seen[explain.Deny] {
			return true
		}
	}
	return false
}

// tiedPaths names agpol's tied paths, for a disagreement's text.
func tiedPaths(ap *explain.AuthPolicyInfo) string {
	out := []string{ap.Path}
	for _, t := range ap.Tied {
		out = append(out, t.Path)
	}
	return strings.Join(out, ", ")
}

// tiedAnswers is what the data plane answers on each tied path, for a disagreement's text.
func tiedAnswers(ts []OracleRequest) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("%s: %d", t.PathID, t.Status)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
