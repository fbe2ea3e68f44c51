package secrets

// keywords finds every occurrence of a set of lowercase ASCII words (two
// bytes or more) in a text, ignoring ASCII case. gitleaks asks for a
// rule's regular expression only where one of its keywords is; with 244
// keywords over every byte a command shows, the pass has to cost about
// what reading the bytes costs.
//
// Each position's first bytes, folded, are looked up in two bitmaps of
// 8 KiB (in the cache): the first two bytes of the two-byte words, a hash
// of the first three of the longer ones. Only where one says a word may
// start are the words that start with those two bytes compared (about 3%
// of a transcript's positions). About 2 ns a byte, as an Aho–Corasick
// table's was: what masking adds to an export is mostly this pass.
type keywords struct {
	words  []string
	two    [1 << 16 / 64]uint64 // the two-byte words
	three  [1 << 16 / 64]uint64 // hashes of the longer words' first three bytes
	bucket [1 << 16]uint8       // first two bytes → 1 + the index of their words in by
	by     [][]int32
}

func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	for w, word := range words {
		if len(word) < 2 {
			panic("secrets: a keyword of fewer than two bytes: " + word)
		}
		b := uint16(fold[word[0]])<<8 | uint16(fold[word[1]])
		if len(word) == 2 {
			k.two[b/64] |= 1 << (b % 64)
		} else {
			h := hash3(fold[word[0]], fold[word[1]], fold[word[2]])
			k.three[h/64] |= 1 << (h % 64)
		}
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

func hash3(a, b, c byte) uint16 {
	return uint16((uint32(a)*0x9E37 ^ uint32(b)*0x85EB ^ uint32(c)*0xC2B3) >> 3)
}

// each calls fn with the index of each word found in text and the offset
// just past it, in the order of where they start.
func (k *keywords) each(text string, fn func(word, end int)) {
	for i := 0; i+1 < len(text); i++ {
		f0, f1 := fold[text[i]], fold[text[i+1]]
		b := uint16(f0)<<8 | uint16(f1)
		hit := k.two[b/64]&(1<<(b%64)) != 0
		if !hit && i+2 < len(text) {
			h := hash3(f0, f1, fold[text[i+2]])
			hit = k.three[h/64]&(1<<(h%64)) != 0
		}
		if !hit || k.bucket[b] == 0 {
			continue
		}
		for _, w := range k.by[k.bucket[b]-1] {
			word := k.words[w]
			if len(text)-i >= len(word) && equalFold(text[i:i+len(word)], word) {
				fn(int(w), i+len(word))
			}
		}
	}
}

// equalFold reports whether s is word (lowercase) but for ASCII case.
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
