package cluster

import (
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteSnapshot writes objects as a multi-document YAML stream that -f reads back.
// Only objects of kinds agpol reads are written; Secrets are never among them.
func WriteSnapshot(w io.Writer, objs []RawObject) error {
	for i, o := range objs {
		if o.Identity().Kind == "Secret" {
			continue
		}
		// Decoded one at a time and dropped: writing must not keep every object decoded.
		data, err := yaml.Marshal(o.transient().Object)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
