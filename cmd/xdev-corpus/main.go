// Command xdev-corpus writes the deterministic benchmark corpus
// (internal/corpus): session files that look like real ones, and a data
// dir of many small sessions.
//
//	xdev-corpus -size 104MB -seed 1 -out big.jsonl
//	xdev-corpus -sessions 10000 -out /tmp/agent   # writes /tmp/agent/sessions/...
//	xdev-corpus -vocabulary 10,200                 # prints those words of the vocabulary
//	xdev-corpus -opencode 10000 -out /tmp/oc/opencode.db   # an opencode 1.18 database
//	xdev-corpus -claude 10000 -out /tmp/claude     # a Claude Code dir (/tmp/claude/projects/...)
//	xdev-corpus -home -sessions 25000 -size 10GB -largest 1800MB -out /tmp/home
//	                                               # a user's archive: omp, Claude Code and Codex sessions of real sizes
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/corpus"
)

func main() {
	size := flag.String("size", "10MB", "size of one session file (KB, MB, GB suffixes)")
	seed := flag.Uint64("seed", 1, "the same seed writes the same bytes")
	uncompacted := flag.Bool("uncompacted", false, "write one conversation without compactions or branches: its context is the whole file")
	sessions := flag.Int("sessions", 0, "write this many small sessions into the data dir -out instead of one file")
	out := flag.String("out", "", "the file (or, with -sessions, the data dir) to write; must not exist")
	vocab := flag.String("vocabulary", "", "print the vocabulary's words of these comma-separated numbers, and stop")
	opencode := flag.Int("opencode", 0, "write an opencode database -out of this many sessions of 20 messages instead")
	claude := flag.Int("claude", 0, "write a Claude Code dir -out of this many sessions instead (for the usage benchmarks)")
	home := flag.Bool("home", false, "write a home directory -out of -sessions sessions of -size bytes in all, of omp, Claude Code and Codex, sized as real archives are")
	largest := flag.String("largest", "", "with -home, add one omp session of this size")
	flag.Parse()
	if *vocab != "" {
		for _, f := range strings.Split(*vocab, ",") {
			k, err := strconv.Atoi(f)
			if err != nil || k < 0 || k >= corpus.VocabularySize {
				fmt.Fprintf(os.Stderr, "xdev-corpus: -vocabulary: %q is not a word number below %d\n", f, corpus.VocabularySize)
				os.Exit(2)
			}
			fmt.Println(corpus.Vocabulary(k))
		}
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "xdev-corpus: -out is required")
		os.Exit(2)
	}
	if *opencode > 0 {
		if err := corpus.WriteOpencode(*out, *opencode, 20); err != nil {
			fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
			os.Exit(1)
		}
		return
	}
	if *claude > 0 {
		if err := corpus.WriteClaude(*out, *claude, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
			os.Exit(1)
		}
		return
	}
	if *home {
		writeHome(*out, *sessions, *size, *largest, *seed)
		return
	}
	if *sessions > 0 {
		st, err := corpus.WriteDir(*out, *sessions, *seed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d sessions in %d projects, %d subagent transcripts, %d bytes\n", *out, st.Sessions, st.Projects, st.Subagents, st.Bytes)
		return
	}
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
		os.Exit(2)
	}
	st, err := corpus.WriteFile(*out, corpus.Options{Size: n, Seed: *seed, Uncompacted: *uncompacted})
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d bytes, %d entries, %d compactions, %d branches\n", *out, st.Bytes, st.Entries, st.Compactions, st.Branches)
}

func writeHome(out string, sessions int, size, largest string, seed uint64) {
	opts := corpus.HomeOptions{Sessions: sessions, Seed: seed}
	var err error
	if opts.Bytes, err = parseSize(size); err == nil && largest != "" {
		opts.Largest, err = parseSize(largest)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
		os.Exit(2)
	}
	st, err := corpus.WriteHome(out, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdev-corpus:", err)
		os.Exit(1)
	}
	for _, h := range []string{"omp", "claude", "codex"} {
		fmt.Printf("%s: %d %s sessions, %d bytes\n", out, st.Sessions[h], h, st.Bytes[h])
	}
	fmt.Printf("%s: %d bytes in all; sessions of %d to %d bytes", out, st.TotalSize, st.Smallest, st.Biggest)
	if st.Largest != "" {
		fmt.Printf(", and %s", st.Largest)
	}
	fmt.Println()
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30} {
		if rest, ok := strings.CutSuffix(strings.ToUpper(s), suffix); ok {
			s, mult = rest, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
