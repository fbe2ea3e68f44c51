package gfm

import (
	"regexp"
	"sync"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

var taskListRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([\sxX])\]\s*`) })

// taskCheckBoxParser parses the [ ] or [x] that begins a list item. It
// must take precedence over the link parser.
type taskCheckBoxParser struct{}

func (s *taskCheckBoxParser) Trigger() []byte { return []byte{'['} }

func (s *taskCheckBoxParser) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	// Given AST structure must be like
	// - List
	//   - ListItem         : parent.Parent
	//     - TextBlock      : parent
	//       (current line)
	if parent.Parent() == nil || parent.Parent().FirstChild() != parent {
		return nil
	}
	if parent.HasChildren() {
		return nil
	}
	if _, ok := parent.Parent().(*gast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	m := taskListRegexp().FindSubmatchIndex(line)
	if m == nil {
		return nil
	}
	value := line[m[2]:m[3]][0]
	block.Advance(m[1])
	checked := value == 'x' || value == 'X'
	return ast.NewTaskCheckBox(checked)
}

func (s *taskCheckBoxParser) CloseBlock(parent gast.Node, pc parser.Context) {}

// taskCheckBoxRenderer renders a check box as a disabled input (HTML,
// not XHTML).
type taskCheckBoxRenderer struct{}

func (r taskCheckBoxRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindTaskCheckBox, r.render)
}

func (r taskCheckBoxRenderer) render(w util.BufWriter, source []byte, node gast.Node, entering bool) (gast.WalkStatus, error) {
	if !entering {
		return gast.WalkContinue, nil
	}
	if node.(*ast.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<input checked="" disabled="" type="checkbox"`)
	} else {
		_, _ = w.WriteString(`<input disabled="" type="checkbox"`)
	}
	_, _ = w.WriteString("> ")
	return gast.WalkContinue, nil
}

type taskList struct{}

// TaskList renders the [ ] and [x] of list items as check boxes.
var TaskList goldmark.Extender = taskList{}

func (taskList) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(&taskCheckBoxParser{}, 0)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(taskCheckBoxRenderer{}, 500)))
}
