package session

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/xdev/xdev/internal/jsonx"
)

// Entry ids are strings in every file omp or xdev wrote, but omp keys its
// entry map by whatever JSON.parse returned, so a file from another writer
// can link entries by numeric ids, and one whose last line has no id still
// has that line as its leaf. Inside xdev an id is a key: a string id is
// itself, and any other value is spelled after a 0xFF byte, which no
// decoded string holds, so the number 5 and the string "5" stay apart as
// they do in a JavaScript Map.
const idOther = "\xff"

// objectIDs numbers object and array ids: a JavaScript Map compares them by
// identity, so no parentId can ever reach one.
var objectIDs atomic.Uint64

// IDKey returns the key of an id value: "" for none (undefined, null or
// the empty string, which omp treats alike), the string itself, or the
// spelled form of another value.
func IDKey(v jsonx.Value) string {
	switch v.Kind() {
	case jsonx.String:
		return v.String()
	case jsonx.Undefined, jsonx.Null:
		return ""
	case jsonx.Number, jsonx.Bool:
		return idOther + v.ToString()
	}
	return idOther + "{}" + strconv.FormatUint(objectIDs.Add(1), 10)
}

// parentKey returns the key of a parentId: "" (a root) for every value
// JavaScript treats as false, as omp's `entry.parentId ? … : undefined`.
func parentKey(v jsonx.Value) string {
	if !v.Truthy() {
		return ""
	}
	return IDKey(v)
}

// IDValue returns the JSON value an id key stands for: a string, a number
// or a boolean, or null for none.
func IDValue(key string) jsonx.Value {
	rest, ok := strings.CutPrefix(key, idOther)
	switch {
	case key == "":
		return jsonx.NullValue()
	case !ok:
		return jsonx.Str(key)
	case rest == "true" || rest == "false":
		return jsonx.BoolValue(rest == "true")
	}
	if f, err := strconv.ParseFloat(rest, 64); err == nil {
		return jsonx.Num(f)
	}
	return jsonx.NullValue() // an object id: nothing can name it
}

// DisplayID returns an id key as a person reads it: a string id as is,
// another value as its JSON.
func DisplayID(key string) string {
	if rest, ok := strings.CutPrefix(key, idOther); ok {
		if strings.HasPrefix(rest, "{}") {
			return "{…}"
		}
		return rest
	}
	return key
}
