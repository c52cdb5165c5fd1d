package cluster

import (
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/snapshot"
)

// SnapshotHeader opens a file WriteSnapshot writes. Reading it back, agpol takes its
// objects as an API server stored them: not defaulted, pruned or validated again, as
// objects read from the cluster are not.
const SnapshotHeader = "# agpol snapshot: objects as the API server stored them (--snapshot-out); replay with agpol -f FILE\n"

// WriteSnapshot writes objects as a multi-document YAML stream that -f reads back,
// after SnapshotHeader. Only objects of kinds agpol reads are written; a Secret is
// written as its metadata and type (snapshot.SecretMetadata), never its data.
func WriteSnapshot(w io.Writer, objs []RawObject) error {
	if _, err := io.WriteString(w, SnapshotHeader); err != nil {
		return err
	}
	for i, o := range objs {
		// Decoded one at a time and dropped: writing must not keep every object decoded.
		u := o.transient()
		if r := o.Ref(); r.Group == "" && r.Kind == "Secret" {
			u = snapshot.SecretMetadata(u)
		}
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
