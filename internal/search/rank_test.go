package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTermRankIsBM25WithoutIDF: for a query of one phrase, every match's
// termRank is its bm25 divided by one factor (the phrase's inverse
// document frequency, positive): so ranking by it is ranking by bm25.
// Generated sessions, random phrases of one to three tokens of every
// frequency (a word in one entry to one in most), prefixes, in the text
// column alone and in every column.
func TestTermRankIsBM25WithoutIDF(t *testing.T) {
	dir := writeDir(t, 80, 17)
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	ct := readCorpus(t, dir, true)
	rng := rand.New(rand.NewPCG(5, 42))
	checked := 0
	for round := range 200 {
		words := ct.randomPhrases(rng)[0]
		q := Query{Text: quote([][]string{words}), Thinking: rng.IntN(2) == 0}
		if rng.IntN(5) == 0 && len(words) == 1 && len(words[0]) > 3 {
			q.Text = words[0][:3] + "*"
		}
		p, err := parseQuery(q.Text)
		if err != nil {
			t.Fatal(err)
		}
		if p.rank == "rank" {
			t.Fatalf("%q: one phrase ranked by bm25", q.Text)
		}
		st, _, err := db.conn.Prepare(`SELECT rank, ` + p.rank + ` FROM docs WHERE docs MATCH ?`)
		if err != nil {
			t.Fatal(err)
		}
		st.BindText(1, q.match(p))
		idf := 0.0
		for st.Step() {
			bm25, term := st.ColumnFloat(0), st.ColumnFloat(1)
			if !(bm25 < 0 && term < 0) {
				t.Fatalf("round %d %q: bm25 %g, termRank %g: not both below 0", round, q.Text, bm25, term)
			}
			r := bm25 / term
			if idf == 0 {
				idf = r
			} else if math.Abs(r-idf) > 1e-9*idf {
				t.Fatalf("round %d %q: bm25/termRank %g, another match's %g", round, q.Text, r, idf)
			}
			checked++
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if checked < 1000 {
		t.Errorf("only %d matches checked", checked)
	}
}

// TestRankOfSeveralPhrasesIsBM25: a query of more than one phrase (two
// words, an OR, a word excluded) is ranked by bm25 itself.
func TestRankOfSeveralPhrasesIsBM25(t *testing.T) {
	for _, q := range []string{"a b", "a OR b", "a -b", `"a b" c`} {
		p, err := parseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		if p.rank != "rank" {
			t.Errorf("%q ranked by %s", q, p.rank)
		}
	}
}
