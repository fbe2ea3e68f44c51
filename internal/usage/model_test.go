package usage

import (
	"strings"
	"testing"
	"unsafe"
)

// TestRefModelKeepsCopies: the table of names lives as long as the
// process, so it must not keep a caller's string, which may be a
// substring of a whole file read once (the usage cache's body).
func TestRefModelKeepsCopies(t *testing.T) {
	body := strings.Repeat("x", 1<<16) + "provider-keep-test/model-keep-test/api-keep-test"
	at := len(body) - len("provider-keep-test/model-keep-test/api-keep-test")
	provider, model, api := body[at:at+18], body[at+19:at+34], body[at+35:]
	n := RefModel(provider, model, api).Name()
	if n != (ModelName{provider, model, api}) {
		t.Fatalf("the name is %+v", n)
	}
	lo, hi := uintptr(unsafe.Pointer(unsafe.StringData(body))), uintptr(unsafe.Pointer(unsafe.StringData(body)))+uintptr(len(body))
	for _, s := range []string{n.Provider, n.Model, n.API} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
			t.Errorf("%q is kept as the caller's substring", s)
		}
	}
}
