// Command gen writes a synthetic agpol topology (see package topogen) for benchmarks:
//
//	go run ./hack/gen -size small|medium|large -out DIR [-seed N] [-requests N -requests-file FILE]
//
// The output is deterministic for a size and seed. DIR receives one manifest file per
// namespace group; read it with agpol -f DIR.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agpol/agpol/hack/gen/topogen"
)

func main() {
	size := flag.String("size", "small", "topology size: small (100 XAccessPolicies), medium (1k) or large (10k)")
	out := flag.String("out", "", "directory to write the manifests to (required)")
	seed := flag.Uint64("seed", 1, "random seed (same seed and size, same bytes)")
	requests := flag.Int("requests", 0, "also write a request file with this many requests (agpol simulate --requests)")
	requestsFile := flag.String("requests-file", "", "where to write the request file (default DIR/../requests-SIZE.yaml)")
	flag.Parse()
	if err := run(*size, *out, *seed, *requests, *requestsFile); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(2)
	}
}

func run(size, out string, seed uint64, requests int, requestsFile string) error {
	if out == "" {
		return fmt.Errorf("-out DIR is required")
	}
	sz, err := topogen.SizeByName(size)
	if err != nil {
		return err
	}
	if requests > 0 && requestsFile == "" {
		requestsFile = filepath.Join(filepath.Dir(filepath.Clean(out)), "requests-"+size+".yaml")
	}
	st, err := topogen.Write(out, requestsFile, topogen.Options{Size: sz, Seed: seed, Requests: requests})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %s: %s\n", size, st)
	if requests > 0 {
		fmt.Fprintf(os.Stderr, "gen: %d requests in %s\n", requests, requestsFile)
	}
	return nil
}
