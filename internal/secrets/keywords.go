package secrets

// keywords finds every occurrence of a set of lowercase ASCII words in a
// text, ignoring ASCII case, in one pass: an Aho–Corasick automaton made
// a full table of transitions, so that each byte of the text costs one
// lookup. gitleaks asks for a rule's regular expression only where one of
// its keywords is; with 244 keywords over every byte a command shows, the
// pass has to cost about what reading the bytes costs.
type keywords struct {
	next  []uint16  // state<<8 | byte → state
	out   [][]int32 // per state, the words that end there (its own and its suffixes')
	words []string
}

func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	// The trie, its transitions in next (0 = none yet; state 0 is the root).
	k.next = make([]uint16, 256)
	k.out = [][]int32{nil}
	for w, word := range words {
		s := 0
		for i := range len(word) {
			c := lower(word[i])
			if k.next[s<<8|int(c)] == 0 {
				k.next = append(k.next, make([]uint16, 256)...)
				k.out = append(k.out, nil)
				k.next[s<<8|int(c)] = uint16(len(k.out) - 1)
			}
			s = int(k.next[s<<8|int(c)])
		}
		k.out[s] = append(k.out[s], int32(w))
	}
	if len(k.out) > 1<<16 {
		panic("secrets: too many keyword states")
	}
	// Breadth first, each state's missing transitions are its failure
	// state's, and its words include its failure state's.
	fail := make([]uint16, len(k.out))
	queue := make([]int, 0, len(k.out))
	for c := range 256 {
		if t := k.next[c]; t != 0 {
			queue = append(queue, int(t))
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		k.out[s] = append(k.out[s], k.out[fail[s]]...)
		for c := range 256 {
			t := k.next[s<<8|c]
			if t == 0 {
				k.next[s<<8|c] = k.next[int(fail[s])<<8|c]
				continue
			}
			fail[t] = k.next[int(fail[s])<<8|c]
			queue = append(queue, int(t))
		}
	}
	return k
}

// each calls fn with the index of each word found in text and the offset
// just past it, in the order of those offsets.
func (k *keywords) each(text string, fn func(word, end int)) {
	s := 0
	for i := range len(text) {
		s = int(k.next[s<<8|int(lower(text[i]))])
		for _, w := range k.out[s] {
			fn(int(w), i+1)
		}
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
