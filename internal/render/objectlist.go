package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectListJSON writes objects as the v1 List kubectl's JSON printer writes for
// `kubectl get -o json` (json.MarshalIndent of the UnstructuredList, four spaces),
// byte for byte, one object at a time: next returns each object in turn (nil at the
// end), and nothing holds them all, nor the whole document, at once. Each object is
// marshalled alone and indented at its depth in the list, which is what indenting the
// whole document does to it. With omitManagedFields, metadata.managedFields is left
// out, as kubectl's printer does without --show-managed-fields (next must then return
// objects the caller owns).
func ObjectListJSON(w io.Writer, omitManagedFields bool, next func() *unstructured.Unstructured) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	var buf bytes.Buffer
	n := 0
	for u := next(); u != nil; u = next() {
		if omitManagedFields {
			u.SetManagedFields(nil)
		}
		data, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		buf.Reset()
		if err := json.Indent(&buf, data, "        ", "    "); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n        ")
		bw.Write(buf.Bytes())
		n++
	}
	if n > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	return bw.Flush()
}
