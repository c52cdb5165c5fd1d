package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/snapshot"
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
	return objectListJSON(w, func() ([]byte, bool, error) {
		u := next()
		if u == nil {
			return nil, false, nil
		}
		if omitManagedFields {
			u.SetManagedFields(nil)
		}
		b, err := listedJSON(u.Object)
		return b, true, err
	})
}

// objectListJSON is ObjectListJSON of the items next returns already encoded (listedJSON);
// ok is false at the end.
func objectListJSON(w io.Writer, next func() (item []byte, ok bool, err error)) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	n := 0
	for {
		b, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if n > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n        ")
		bw.Write(b)
		n++
	}
	if n > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	return bw.Flush()
}

// listedItemJSON writes an object as encoding/json's Marshal and then Indent with
// prefix "        " and indent "    " write it (encoding/json's semantics, v1 options:
// HTML escaped, map keys sorted), in one pass.
var listedItemJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsontext.WithIndentPrefix("        "), jsontext.WithIndent("    "))

// listedJSON is an object as an item of ObjectListJSON's List: marshalled, and indented
// at its depth in the list.
func listedJSON(obj map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	if err := jsonv2.MarshalWrite(&buf, obj, listedItemJSON); err != nil {
		return nil, err
	}
	if !bytes.Contains(buf.Bytes(), replacementChar) {
		return buf.Bytes(), nil
	}
	// encoding/json writes invalid UTF-8 as the escape \ufffd, jsontext as the
	// character itself: an object holding one (rare) is written by encoding/json.
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	buf.Reset()
	if err := json.Indent(&buf, data, "        ", "    "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodedItem is an object of `get -o json` encoded as an item of its List (listedJSON)
// while it was read (ListedJSONInspect).
type encodedItem []byte

// ListedJSONInspect returns what `agpol get -o json` has the reader do to each object
// as read (cluster.FileOptions.Inspect): an object of the kinds listed (by group, with
// agentic group aliases folded, and kind) that sel selects is encoded as an item of the
// List Get writes, in the parallel read, so that Get writes it as it is, neither decoding
// it again nor encoding it on one core. With omitManagedFields, metadata.managedFields
// is left out, as ObjectListJSON leaves it out. Other objects, and an object that cannot
// be encoded (Get reports why), are left to Get.
func ListedJSONInspect(kinds map[schema.GroupKind]bool, sel Selector, omitManagedFields bool) func(*unstructured.Unstructured) any {
	return func(u *unstructured.Unstructured) any {
		id := snapshot.RefOf(u)
		if !kinds[schema.GroupKind{Group: id.Group, Kind: id.Kind}] {
			return nil
		}
		m := metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}
		if sel.Labels != nil {
			m.Labels = u.GetLabels()
		}
		if !sel.match(m) {
			return nil
		}
		obj := u.Object
		if md, ok := obj["metadata"].(map[string]any); ok && omitManagedFields {
			if _, has := md["managedFields"]; has {
				// The object is not the reader's to change: copy what changes.
				obj, md = maps.Clone(obj), maps.Clone(md)
				delete(md, "managedFields")
				obj["metadata"] = md
			}
		}
		b, err := listedJSON(obj)
		if err != nil {
			return nil
		}
		return encodedItem(b)
	}
}
