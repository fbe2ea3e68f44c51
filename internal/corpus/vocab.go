package corpus

import (
	"math"
	"sort"
)

// VocabularySize is how many distinct rare words sessions draw from.
const VocabularySize = 50000

// Vocabulary returns word k (0 ≤ k < VocabularySize): six letters, three
// syllables of a consonant from g–z and a vowel, so no word is hex (ids,
// hashes) or in the common word list, and none is a part of another. Real
// transcripts are full of such rare words (names, identifiers, errors),
// drawn as natural language draws them: word k about 1/(k+1) as often as
// word 0. Search benchmarks query them at chosen frequencies.
func Vocabulary(k int) string {
	const cons, vows = "ghjklmnprstvz", "aeiou"
	b := make([]byte, 6)
	for i := 2; i >= 0; i-- {
		syl := k % (len(cons) * len(vows))
		k /= len(cons) * len(vows)
		b[2*i], b[2*i+1] = cons[syl/len(vows)], vows[syl%len(vows)]
	}
	return string(b)
}

// vocabCDF is the cumulative Zipf distribution over the Vocabulary.
var vocabCDF = func() []float64 {
	cdf := make([]float64, VocabularySize)
	sum := 0.0
	for k := range cdf {
		sum += 1 / math.Pow(float64(k+1), 1.07)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return cdf
}()

// VocabularyShare returns the share of vocabulary draws that give word k.
func VocabularyShare(k int) float64 {
	if k == 0 {
		return vocabCDF[0]
	}
	return vocabCDF[k] - vocabCDF[k-1]
}

// vocab draws a word of the Vocabulary.
func (g *gen) vocab() string {
	return Vocabulary(sort.SearchFloat64s(vocabCDF, g.r.Float64()))
}
