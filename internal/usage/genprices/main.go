// Command genprices writes internal/usage's price table, prices.json.gz,
// from omp's model catalog: the cost of every model in
// @oh-my-pi/pi-catalog's src/models.json (installed with omp for the
// interop suite), as it stands, with the package's version. Run it with
// go generate ./internal/usage after interop/omp/install.sh.
package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func main() {
	catalog := flag.String("catalog", "../../interop/omp/node_modules/@oh-my-pi/pi-catalog", "the pi-catalog package's directory")
	out := flag.String("out", "prices.json.gz", "the table to write")
	date := flag.String("date", "", "the date to record (YYYY-MM-DD)")
	flag.Parse()
	if err := run(*catalog, *out, *date); err != nil {
		fmt.Fprintln(os.Stderr, "genprices:", err)
		os.Exit(1)
	}
}

type model struct {
	Provider string         `json:"provider"`
	ID       string         `json:"id"`
	Cost     jsontext.Value `json:"cost"`
}

func run(dir, out, date string) error {
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &pkg, json.RejectUnknownMembers(false)); err != nil {
		return err
	}
	b, err = os.ReadFile(filepath.Join(dir, "src", "models.json"))
	if err != nil {
		return err
	}
	var catalog map[string]map[string]struct {
		Cost jsontext.Value `json:"cost"`
	}
	if err := json.Unmarshal(b, &catalog, json.RejectUnknownMembers(false)); err != nil {
		return err
	}
	var models []model
	for provider, ms := range catalog {
		for id, m := range ms {
			if len(m.Cost) == 0 {
				continue
			}
			cost := m.Cost.Clone()
			if err := cost.Compact(); err != nil {
				return err
			}
			models = append(models, model{provider, id, cost})
		}
	}
	slices.SortFunc(models, func(a, b model) int { return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID)) })
	table, err := json.Marshal(struct {
		Source string  `json:"source"`
		Date   string  `json:"date"`
		Models []model `json:"models"`
	}{pkg.Name + "@" + pkg.Version + " src/models.json", date, models})
	if err != nil {
		return err
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(table)
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, z.Bytes(), 0o644)
}
