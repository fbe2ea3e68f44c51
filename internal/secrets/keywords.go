package secrets

// keywords finds every occurrence of a set of lowercase ASCII words (two
// bytes or more) in a text, ignoring ASCII case. gitleaks asks for a
// rule's regular expression only where one of its keywords is; with 244
// keywords over every byte a command shows, the pass has to cost about
// what reading the bytes costs.
//
// Each byte is mapped to a class of six bits (its folded value among the
// bytes the words hold; 0 for any other), and the classes of the last
// three bytes, shifted in as they are read, index one bitmap of 32 KiB
// that says whether a word may start three bytes back: its first three
// bytes, or for a two-byte word its two and any third. So a byte costs a
// table load, a shift and a bit test. Only where the bitmap says so are
// the words that start with those two bytes compared (a few percent of
// a transcript's positions). About 1.6 ns a byte (BenchmarkKeywords:
// 630 MB/s here, where the two lookups a byte before it did 415).
type keywords struct {
	words  []string
	class  [256]uint8           // each byte's class; 0 for a byte no word holds
	starts [1 << 18 / 64]uint64 // three classes → a word may start there
	bucket [1 << 16]uint8       // first two folded bytes → 1 + the index of their words in by
	by     [][]int32
}

func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	next := uint8(1)
	classOf := func(c byte) uint8 {
		if k.class[c] == 0 {
			// A class for each byte the words hold, the last shared by
			// the rest (the words are compared anyway).
			k.class[c] = next
			if up := c - 'a' + 'A'; c >= 'a' && c <= 'z' {
				k.class[up] = next
			}
			if next < 63 {
				next++
			}
		}
		return k.class[c]
	}
	for _, word := range words {
		for i := range len(word) {
			classOf(word[i])
		}
	}
	for w, word := range words {
		if len(word) < 2 {
			panic("secrets: a keyword of fewer than two bytes: " + word)
		}
		c0, c1 := uint32(k.class[word[0]]), uint32(k.class[word[1]])
		if len(word) == 2 {
			for c2 := range uint32(64) {
				x := c0<<12 | c1<<6 | c2
				k.starts[x/64] |= 1 << (x % 64)
			}
		} else {
			x := c0<<12 | c1<<6 | uint32(k.class[word[2]])
			k.starts[x/64] |= 1 << (x % 64)
		}
		b := uint16(fold[word[0]])<<8 | uint16(fold[word[1]])
		if k.bucket[b] == 0 {
			if len(k.by) == 255 {
				panic("secrets: too many keywords' starts")
			}
			k.by = append(k.by, nil)
			k.bucket[b] = uint8(len(k.by))
		}
		k.by[k.bucket[b]-1] = append(k.by[k.bucket[b]-1], int32(w))
	}
	return k
}

// each calls fn with the index of each word found in text and the offset
// just past it, in the order of where they start.
func (k *keywords) each(text string, fn func(word, end int)) {
	if len(text) < 2 {
		return
	}
	x := uint32(k.class[text[0]])<<6 | uint32(k.class[text[1]])
	for i := 0; i+2 < len(text); i++ {
		// x holds the classes of text[i:i+3].
		x = (x<<6 | uint32(k.class[text[i+2]])) & (1<<18 - 1)
		if k.starts[x/64]&(1<<(x%64)) != 0 {
			k.at(text, i, fn)
		}
	}
	// The last two bytes, a class 0 past them.
	if x = (x << 6) & (1<<18 - 1); k.starts[x/64]&(1<<(x%64)) != 0 {
		k.at(text, len(text)-2, fn)
	}
}

// at calls fn with each word at text[i:].
func (k *keywords) at(text string, i int, fn func(word, end int)) {
	b := uint16(fold[text[i]])<<8 | uint16(fold[text[i+1]])
	if k.bucket[b] == 0 {
		return
	}
	for _, w := range k.by[k.bucket[b]-1] {
		word := k.words[w]
		if len(text)-i >= len(word) && equalFold(text[i:i+len(word)], word) {
			fn(int(w), i+len(word))
		}
	}
}

// equalFold reports whether s is word (lowercase) but for ASCII case,
// its first two bytes known to be.
func equalFold(s, word string) bool {
	for i := 2; i < len(word); i++ {
		if fold[s[i]] != word[i] {
			return false
		}
	}
	return true
}

// fold is each byte with ASCII letters in lower case.
var fold = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c) + 'a' - 'A'
	}
	return t
}()
