// Command gen writes a synthetic agpol topology (see package topogen) for benchmarks:
//
//	go run ./hack/gen -size small|medium|large -out DIR [-scale N] [-seed N] [-requests N -requests-file FILE]
//
// -scale N multiplies every kind of object of the size by N (large -scale 3: 600
// Gateways, 6,000 XBackends, 30,000 XAccessPolicies). The output is deterministic for a
// size, scale and seed. DIR receives one manifest file per
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
	scale := flag.Int("scale", 1, "multiply every kind of object of the size by this")
	seed := flag.Uint64("seed", 1, "random seed (same seed and size, same bytes)")
	requests := flag.Int("requests", 0, "also write a request file with this many requests (agpol simulate --requests)")
	requestsFile := flag.String("requests-file", "", "where to write the request file (default DIR/../requests-SIZE.yaml)")
	flag.Parse()
	if err := run(*size, *scale, *out, *seed, *requests, *requestsFile); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(2)
	}
}

func run(size string, scale int, out string, seed uint64, requests int, requestsFile string) error {
	if out == "" {
		return fmt.Errorf("-out DIR is required")
	}
	sz, err := topogen.SizeByName(size)
	if err != nil {
		return err
	}
	if scale < 1 {
		return fmt.Errorf("-scale must be at least 1")
	}
	sz = sz.Scaled(scale)
	if requests > 0 && requestsFile == "" {
		requestsFile = filepath.Join(filepath.Dir(filepath.Clean(out)), "requests-"+sz.Name+".yaml")
	}
	st, err := topogen.Write(out, requestsFile, topogen.Options{Size: sz, Seed: seed, Requests: requests})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %s: %s\n", sz.Name, st)
	if requests > 0 {
		fmt.Fprintf(os.Stderr, "gen: %d requests in %s\n", requests, requestsFile)
	}
	return nil
}
