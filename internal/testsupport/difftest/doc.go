// Package difftest is the scaffolding the differential harnesses share
// (internal/testsupport/differential and kuadrantdiff): seeded scenarios run on
// parallel workers, shrinking a disagreeing scenario's objects, regression cases as
// manifest files, and the environment knobs of the long runs. Like the harnesses it is
// imported only by tests (cmd/agpol's TestBinaryDependencies keeps it out of the
// binary).
package difftest
