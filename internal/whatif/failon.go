package whatif

// Fails is whether the diff holds a change of kind failOn: granted, revoked or any
// (none, or anything else, never fails).
func (d *DiffResult) Fails(failOn string) bool {
	switch failOn {
	case "granted":
		return d.Granted.Len() > 0
	case "revoked":
		return d.Revoked.Len() > 0
	case "any":
		return d.Count() > 0
	}
	return false
}
