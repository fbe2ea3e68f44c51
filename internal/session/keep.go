package session

// What a windowed load keeps from before its window: the entries of the
// path the context build still reads there, and nothing else. Both load
// paths apply this one rule (the backward walk in backward.go and the v1
// forward window in open.go), and it mirrors the settings fold of
// buildContext (context.go) and the notebook lookup of contextNotes
// (context_omp.go):
//
//	thinking_level_change            the latest one       ctx.ThinkingLevel
//	model_change that sets a model   the latest per role  ctx.Models
//	assistant message                the latest one       the main model when no model_change sets it
//	context notebook (custom entry)  all since the latest reset; the latest valid one is shown
//
// Service tier, mode and TTSR entries shape no part of the context, so
// they are not kept. FuzzBuildContext generates every kind in this table
// and checks that a windowed load builds the context a full load builds.

// keepRule is the table above for one record: the key under which the
// latest record is kept, or notebook (kept back to a reset), or reset.
type keepRule struct {
	key      string
	notebook bool
	reset    bool
}

func ruleOf(r *record) keepRule {
	switch {
	case r.typeName() == TypeThinkingLevelChange:
		return keepRule{key: r.typeName()}
	case r.typeName() == TypeModelChange && r.modelRole() != "":
		return keepRule{key: "model:" + r.modelRole()}
	case r.assistant:
		return keepRule{key: "assistant"}
	case r.notes:
		return keepRule{notebook: true}
	case r.typeName() == TypeResetBoundary:
		return keepRule{reset: true}
	}
	return keepRule{}
}

// prefixKeeper applies the rule to the path before the window, met from
// the window toward the root (the latest first).
type prefixKeeper struct {
	seen      map[string]bool
	pastReset bool
}

// keeps reports whether r is kept.
func (k *prefixKeeper) keeps(r *record) bool {
	rule := ruleOf(r)
	switch {
	case rule.reset:
		k.pastReset = true
	case rule.notebook:
		return !k.pastReset
	case rule.key != "":
		if k.seen == nil {
			k.seen = map[string]bool{}
		}
		if !k.seen[rule.key] {
			k.seen[rule.key] = true
			return true
		}
	}
	return false
}
