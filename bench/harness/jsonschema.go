package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agpol/agpol/internal/crds"
)

// jsonSchemas writes the OpenAPI schema of every served version of every embedded CRD
// as a JSON schema file kubeconform reads (-schema-location
// 'DIR/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'): kubeconform then
// validates the same files against the same schemas as agpol, without CEL rules.
func jsonSchemas(args []string) error {
	fs := flag.NewFlagSet("jsonschema", flag.ExitOnError)
	out := fs.String("out", "", "directory to write the schemas into")
	_ = fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("jsonschema: -out is required")
	}
	defs, err := crds.CRDs()
	if err != nil {
		return err
	}
	n := 0
	for _, crd := range defs {
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			data, err := json.Marshal(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return err
			}
			p := filepath.Join(*out, crd.Spec.Group, strings.ToLower(crd.Spec.Names.Kind)+"_"+v.Name+".json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
			n++
		}
	}
	fmt.Printf("schemas=%d\n", n)
	return nil
}
