// Package foreign reads the sessions of other coding agents (Claude Code
// so far) and converts them into omp-format entries, rule for rule as
// omp's own importers do, so that an imported session resumes in omp and
// xdev with the context omp's import would give. It reads the source
// files and never writes to them.
package foreign
