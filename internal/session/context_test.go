package session

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
)

// TestBuildContextGolden rebuilds the context of every hand-made file in
// testdata/context and compares it with a golden file. The same files are
// checked against real omp by the interop suite, so the goldens are omp's
// answers too.
func TestBuildContextGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/context/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sum := fileSum(t, f)
			malformed := 0
			for _, full := range []bool{true, false} {
				s, err := Open(f, &OpenOptions{Full: full})
				if err != nil {
					t.Fatal(err)
				}
				// A windowed load counts the bad lines it reads, not those on
				// other branches; the golden holds the full count.
				if full {
					malformed = s.Malformed()
				} else if s.Malformed() > malformed {
					t.Errorf("windowed load counts %d malformed lines, the full one %d", s.Malformed(), malformed)
				}
				ctx := s.BuildContext()
				title, src := s.Title()
				// Written as JSON.stringify(…, null, 2) would: messages exactly as
				// omp hands them to the model (lone surrogates stay escapes).
				msgs := make([]jsonx.Value, len(ctx.Messages))
				for i := range ctx.Messages {
					raw, _ := ctx.Messages[i].MarshalJSON()
					if msgs[i], err = jsonx.Parse(raw); err != nil {
						t.Fatal(err)
					}
				}
				str := func(name, s string) jsonx.Member { return jsonx.Member{Name: name, Value: jsonx.Str(s)} }
				got := jsonx.ObjectOf(
					jsonx.Member{Name: "leafId", Value: IDValue(ctx.LeafID)},
					str("title", title), str("titleSource", src.String()), str("model", ctx.Model()),
					str("thinkingLevel", ctx.ThinkingLevel), jsonx.Member{Name: "malformed", Value: jsonx.Num(float64(malformed))},
					jsonx.Member{Name: "messages", Value: jsonx.ArrayOf(msgs...)},
				).AppendIndent(nil, "  ")
				golden(t, strings.TrimSuffix(f, ".jsonl")+".golden.json", append(got, '\n'))
			}
			unchanged(t, f, sum)
		})
	}
}

func TestBuildContextCases(t *testing.T) {
	tests := []struct {
		file      string
		roles     string // roles of the context messages, space-separated
		leaf      string
		malformed int
	}{
		{"basic.jsonl", "user assistant toolResult assistant", "a0000009", 0},
		{"compaction.jsonl", "compactionSummary user assistant user assistant", "b0000007", 0},
		{"reset-after-compaction.jsonl", "user assistant", "c0000008", 0},
		{"compaction-after-reset.jsonl", "compactionSummary user assistant user assistant user", "d0000007", 0},
		{"branches.jsonl", "user assistant user assistant", "e0000008", 0},
		{"custom-and-failures.jsonl", "user assistant custom custom user assistant", "f000000a", 0},
		{"dangling-parent.jsonl", "user assistant", "g0000003", 0},
		// {"no":"type"} is an entry, as in omp: JSON.parse keeps any object.
		{"malformed.jsonl", "user assistant", "h0000003", 2}, // 42 is an entry to omp: not malformed
		// A branch marker back past the latest compaction: the path has no
		// boundary, so the window must keep what it reaches.
		{"branch-before-compaction.jsonl", "user assistant user", "i0000009", 0},
		// Lines JSON.parse rejects (raw control characters, bad escapes) are
		// skipped as omp skips them; a raw tab is no better.
		{"hostile-json.jsonl", "user assistant user", "j0000008", 4},
		{"hostile-utf8.jsonl", "user assistant", "k0000002", 0},
		// Duplicates (the later wins), a cycle, a self-parent, a parent
		// after its child: the path follows omp's id map.
		{"hostile-tree.jsonl", "user assistant assistant user user", "t0000008", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Open(filepath.Join("testdata/context", tt.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := s.BuildContext()
			var roles []string
			for _, m := range ctx.Messages {
				roles = append(roles, string(m.Role))
			}
			if got := strings.Join(roles, " "); got != tt.roles {
				t.Errorf("roles = %q, want %q", got, tt.roles)
			}
			if ctx.LeafID != tt.leaf {
				t.Errorf("leaf = %s, want %s", ctx.LeafID, tt.leaf)
			}
			full, err := Open(filepath.Join("testdata/context", tt.file), &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if full.Malformed() != tt.malformed {
				t.Errorf("malformed = %d, want %d (%v)", full.Malformed(), tt.malformed, full.BadLines())
			}
		})
	}
}

// TestDanglingToolCallStripped checks the rewritten turn: the unpaired
// tool call, the redacted thinking and the signature are gone, and the
// rest of the message keeps its bytes.
func TestDanglingToolCallStripped(t *testing.T) {
	s, err := Open("testdata/context/custom-and-failures.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := s.BuildContext()
	last := ctx.Messages[len(ctx.Messages)-1]
	raw := string(last.Raw())
	for _, gone := range []string{"call_10", "redactedThinking", "thinkingSignature"} {
		if strings.Contains(raw, gone) {
			t.Errorf("%s survived: %s", gone, raw)
		}
	}
	if !strings.Contains(raw, `"api":"anthropic-messages"`) {
		t.Errorf("other members lost: %s", raw)
	}
}
