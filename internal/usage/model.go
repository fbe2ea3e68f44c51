package usage

import (
	"strings"
	"sync"
)

// A ModelRef names a model as a call records it (its provider, id and
// API), by its place in the process's table of the names seen: a Call
// holds no pointer, so that the garbage collector never scans the
// hundreds of thousands of calls of a ledger, and equal names compare as
// equal numbers. 0 is no model.
type ModelRef uint32

// ModelName is what a ModelRef names.
type ModelName struct{ Provider, Model, API string }

var models struct {
	sync.RWMutex
	names []ModelName
	refs  map[ModelName]ModelRef
}

// RefModel is the ModelRef of a model's name.
func RefModel(provider, model, api string) ModelRef {
	n := ModelName{provider, model, api}
	models.RLock()
	r, ok := models.refs[n]
	models.RUnlock()
	if ok {
		return r
	}
	models.Lock()
	defer models.Unlock()
	if r, ok := models.refs[n]; ok {
		return r
	}
	if models.refs == nil {
		models.names = []ModelName{{}}
		models.refs = map[ModelName]ModelRef{{}: 0}
		if n == (ModelName{}) {
			return 0
		}
	}
	// The table lives as long as the process: it keeps copies, never the
	// caller's strings, which may be substrings of a whole file read
	// once (the usage cache's body, 9 MB at 10,000 sessions, would stay
	// for the sake of a model's name).
	n = ModelName{strings.Clone(provider), strings.Clone(model), strings.Clone(api)}
	r = ModelRef(len(models.names))
	models.names = append(models.names, n)
	models.refs[n] = r
	return r
}

// Name is the name r refers to.
func (r ModelRef) Name() ModelName {
	models.RLock()
	defer models.RUnlock()
	if int(r) >= len(models.names) {
		return ModelName{}
	}
	return models.names[r]
}

// Provider, ID and API are the parts of r's name.
func (r ModelRef) Provider() string { return r.Name().Provider }
func (r ModelRef) ID() string       { return r.Name().Model }
func (r ModelRef) API() string      { return r.Name().API }

// WithProvider is r's model served by provider.
func (r ModelRef) WithProvider(provider string) ModelRef {
	n := r.Name()
	return RefModel(provider, n.Model, n.API)
}
