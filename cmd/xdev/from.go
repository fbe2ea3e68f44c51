package main

import (
	"strings"

	"github.com/xdev/xdev/internal/catalog"
)

// harnesses are what --from names, in the order `--from all` lists them:
// the catalog's list (catalog.Every), so a harness added there is named
// by every --from, its help and its errors.
var harnesses = func() []string {
	var out []string
	for _, h := range catalog.Every {
		out = append(out, string(h))
	}
	return out
}()

// harnessChoices are the names --from takes, as its help and its errors
// say them: "xdev, omp, claude, … or all".
func harnessChoices() string {
	return strings.Join(harnesses, ", ") + " or all"
}
