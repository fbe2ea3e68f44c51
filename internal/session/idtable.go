package session

import "hash/maphash"

// idTable finds an Index's entry by id: an open-addressed table of entry
// positions, at most half full, 8 bytes an entry (a Go map of the ids
// takes about 45). Where ids repeat, the later entry wins, as omp's id
// map keeps the last entry set under an id.
type idTable struct {
	slots []int32 // position+1 in recs; 0 is empty
}

var idTableSeed = maphash.MakeSeed()

func newIDTable(recs []record) idTable {
	size := 1024
	for size < 2*len(recs) {
		size *= 2
	}
	t := idTable{slots: make([]int32, size)}
	mask := uint64(size - 1)
	for i := range recs {
		id := recs[i].id
		for s := maphash.String(idTableSeed, id) & mask; ; s = (s + 1) & mask {
			if j := t.slots[s]; j == 0 || recs[j-1].id == id {
				t.slots[s] = int32(i + 1)
				break
			}
		}
	}
	return t
}

// lookup returns the position of the last entry with id.
func (t idTable) lookup(recs []record, id string) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	for s := maphash.String(idTableSeed, id) & mask; ; s = (s + 1) & mask {
		switch j := t.slots[s]; {
		case j == 0:
			return 0, false
		case recs[j-1].id == id:
			return int(j - 1), true
		}
	}
}
