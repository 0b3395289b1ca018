package calltree

import (
	"bufio"
	"cmp"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
)

// Flame graph geometry, in SVG user units (pixels).
const (
	flameWidth   = 1200.0
	flamePad     = 10.0 // left and right
	flameRow     = 16.0
	flameTop     = 56.0 // title, subtitle and buttons
	flameBottom  = 28.0 // details line
	flameMinPx   = 0.1  // narrower frames (and their callees) are left out
	flameFont    = 12.0
	flameCharPx  = 7.0 // about one character at flameFont
	flameMinText = 3   // characters: a frame shows its name from this many on
)

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func esc(s string) string { return xmlEscaper.Replace(s) }

// flameFrame is one frame drawn.
type flameFrame struct {
	node  int32
	x, w  float64 // fractions of the root's width
	depth int
}

// flameLayout places the nodes: every node's width is its weight (total
// ms, or calls in its subtree) as a fraction of the root's.
func (t *Tree) flameLayout(byCalls bool) (frames []flameFrame, unit string, maxDepth int) {
	weight := make([]int64, len(t.nodes))
	if !byCalls {
		for i := len(t.nodes) - 1; i > Root; i-- {
			weight[i] = t.nodes[i].total
		}
		for c := t.nodes[Root].child; c != 0; c = t.nodes[c].next {
			weight[Root] += weight[c]
		}
		if weight[Root] == 0 {
			byCalls = true
		}
	}
	if byCalls {
		clear(weight)
		// Nodes come after their parents: add each subtree up backwards.
		for i := len(t.nodes) - 1; i > Root; i-- {
			weight[i] += t.nodes[i].calls
			weight[t.nodes[i].parent] += weight[i]
		}
		unit = "calls"
	} else {
		unit = "ms"
	}
	if weight[Root] == 0 {
		return nil, unit, 0
	}
	rootW := float64(weight[Root])
	minFrac := flameMinPx / (flameWidth - 2*flamePad)
	type item struct {
		node  int32
		x     float64
		depth int
	}
	names := map[int32]string{}
	name := func(m int32) string {
		s, ok := names[m]
		if !ok {
			s = t.MethodName(m)
			names[m] = s
		}
		return s
	}
	stack := []item{{Root, 0, 0}}
	var kids []int32
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		w := float64(weight[it.node]) / rootW
		if w < minFrac {
			continue
		}
		frames = append(frames, flameFrame{node: it.node, x: it.x, w: w, depth: it.depth})
		maxDepth = max(maxDepth, it.depth)
		kids = kids[:0]
		for c := t.nodes[it.node].child; c != 0; c = t.nodes[c].next {
			kids = append(kids, c)
		}
		slices.SortFunc(kids, func(a, b int32) int {
			return cmp.Compare(name(t.nodes[a].method), name(t.nodes[b].method))
		})
		x := it.x
		start := len(stack)
		for _, c := range kids {
			stack = append(stack, item{c, x, it.depth + 1})
			x += float64(weight[c]) / rootW
		}
		slices.Reverse(stack[start:]) // first callee drawn first
	}
	return frames, unit, maxDepth
}

// frameColor picks a warm colour from the name, so that a method keeps its
// colour across graphs.
func frameColor(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	g := 80 + (v>>8)%150
	b := 40 + (v>>16)%50
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

// fitText shortens name to what w pixels show.
func fitText(name string, w float64) string {
	n := int((w - 6) / flameCharPx)
	if n < flameMinText {
		return ""
	}
	if len(name) <= n {
		return name
	}
	return name[:n-2] + ".."
}

// WriteFlameSVG writes a flame graph as one SVG file that needs nothing
// else: the root at the bottom, each call path above its caller, as wide
// as its total time (or its calls; see Options.ByCalls). Each frame's
// title gives total and self time, calls and exceptions. Its script
// zooms into a frame on click and highlights the frames whose names match
// a search (the Search button, or Ctrl-F).
func (t *Tree) WriteFlameSVG(w io.Writer, opt *Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	t.flameSVG(bw, opt, true)
	return bw.Flush()
}

// WriteFlameHTML writes the flame graph of WriteFlameSVG inline in an HTML
// page.
func (t *Tree) WriteFlameHTML(w io.Writer, opt *Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	title := esc(t.title(opt))
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n"+
		"<style>body{margin:0;background:#fff}svg{display:block}</style></head>\n<body>\n", title)
	t.flameSVG(bw, opt, false)
	bw.WriteString("</body></html>\n")
	return bw.Flush()
}

func (t *Tree) flameSVG(w *bufio.Writer, opt *Options, standalone bool) {
	if opt == nil {
		opt = &Options{}
	}
	frames, unit, maxDepth := t.flameLayout(opt.ByCalls)
	height := flameTop + float64(maxDepth+1)*flameRow + flameBottom
	inner := flameWidth - 2*flamePad
	root := t.Node(Root)
	if standalone {
		w.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n")
	}
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" id="flame" width="%g" height="%g" viewBox="0 0 %g %g" data-unit="%s" data-pad="%g" data-inner="%g">`+"\n",
		flameWidth, height, flameWidth, height, unit, flamePad, inner)
	fmt.Fprintf(w, "<style>text{font-family:monospace;font-size:%gpx;fill:#000}.f{cursor:pointer}.f:hover rect{stroke:#000;stroke-width:.5}"+
		"#flame .btn{cursor:pointer;fill:#06c}</style>\n", flameFont)
	fmt.Fprintf(w, `<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f0"/>`+"\n")
	fmt.Fprintf(w, `<text x="%g" y="20" text-anchor="middle" style="font-size:16px">%s</text>`+"\n", flameWidth/2, esc(t.title(opt)))
	sub := fmt.Sprintf("%d calls on %d thread(s), %d ms in outermost calls; frame width: %s", t.st.Calls, t.st.Threads, root.Total, unit)
	if unit == "calls" && !opt.ByCalls {
		sub += " (every call took under 1 ms)"
	}
	if ws := t.Warnings(); len(ws) > 0 {
		sub += "; " + strings.Join(ws, "; ")
	}
	fmt.Fprintf(w, `<text x="%g" y="38" text-anchor="middle">%s</text>`+"\n", flameWidth/2, esc(sub))
	fmt.Fprintf(w, `<text id="reset" class="btn" x="%g" y="20" style="display:none">Reset zoom</text>`+"\n", flamePad)
	fmt.Fprintf(w, `<text id="search" class="btn" x="%g" y="20" text-anchor="end">Search</text>`+"\n", flameWidth-flamePad)
	fmt.Fprintf(w, `<text id="matched" x="%g" y="%g" text-anchor="end"></text>`+"\n", flameWidth-flamePad, height-10)
	fmt.Fprintf(w, `<text id="details" x="%g" y="%g"> </text>`+"\n", flamePad, height-10)
	w.WriteString("<g id=\"frames\">\n")
	for _, f := range frames {
		n := t.Node(f.node)
		name := "all"
		if f.node != Root {
			name = t.MethodName(n.Method)
		}
		pct := 0.0
		if root.Total > 0 {
			pct = 100 * float64(n.Total) / float64(root.Total)
		}
		info := fmt.Sprintf("%s: total %d ms (%.2f%%), self %d ms, %d call(s)", name, n.Total, pct, n.Self, n.Calls)
		if n.Thrown > 0 || n.Bubbled > 0 {
			info += fmt.Sprintf(", %d exception(s) thrown, %d call(s) ended by an exception", n.Thrown, n.Bubbled)
		}
		x := flamePad + f.x*inner
		wd := f.w * inner
		y := height - flameBottom - float64(f.depth+1)*flameRow
		fill := frameColor(name)
		if f.node == Root {
			fill = "rgb(200,200,200)"
		}
		fmt.Fprintf(w, `<g class="f" data-x="%.9g" data-w="%.9g" data-d="%d" data-n="%s" data-c="%s"><title>%s</title>`,
			f.x, f.w, f.depth, esc(name), fill, esc(info))
		fmt.Fprintf(w, `<rect x="%.2f" y="%g" width="%.2f" height="%g" fill="%s" rx="2"/>`, x, y, wd, flameRow-1, fill)
		fmt.Fprintf(w, `<text x="%.2f" y="%g">%s</text></g>`+"\n", x+3, y+flameRow-4.5, esc(fitText(name, wd)))
	}
	w.WriteString("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n")
	w.WriteString(flameScript)
	w.WriteString("]]></script>\n</svg>\n")
}

// flameScript zooms and searches; it uses the data-* attributes of the
// frames: x and w as fractions of the root's width, d the depth, n the
// name, c the fill.
const flameScript = `(function () {
  var svg = document.getElementById("flame");
  var pad = +svg.getAttribute("data-pad"), inner = +svg.getAttribute("data-inner");
  var frames = Array.prototype.slice.call(svg.querySelectorAll("g.f"));
  var details = document.getElementById("details"), matched = document.getElementById("matched");
  var reset = document.getElementById("reset"), search = document.getElementById("search");
  var CHAR = 7, eps = 1e-9;
  function num(g, a) { return +g.getAttribute("data-" + a); }
  function fit(g, w) {
    var n = g.getAttribute("data-n"), c = Math.floor((w - 6) / CHAR);
    var t = g.querySelector("text");
    t.textContent = c < 3 ? "" : (n.length <= c ? n : n.slice(0, c - 2) + "..");
  }
  function place(g, x, w) {
    var r = g.querySelector("rect"), t = g.querySelector("text");
    r.setAttribute("x", (pad + x * inner).toFixed(2));
    r.setAttribute("width", (w * inner).toFixed(2));
    t.setAttribute("x", (pad + x * inner + 3).toFixed(2));
    fit(g, w * inner);
  }
  function zoom(z) {
    var x0 = num(z, "x"), w0 = num(z, "w"), d0 = num(z, "d");
    frames.forEach(function (g) {
      var x = num(g, "x"), w = num(g, "w"), d = num(g, "d");
      if (d < d0 && x <= x0 + eps && x + w >= x0 + w0 - eps) {
        g.style.display = ""; g.style.opacity = "0.6"; place(g, 0, 1);
      } else if (d >= d0 && x >= x0 - eps && x + w <= x0 + w0 + eps && (w / w0) * inner >= 0.1) {
        g.style.display = ""; g.style.opacity = ""; place(g, (x - x0) / w0, w / w0);
      } else {
        g.style.display = "none";
      }
    });
    reset.style.display = d0 > 0 ? "" : "none";
  }
  function unzoom() { zoom(frames[0]); }
  function find() {
    var term = window.prompt("Search (regular expression):", "");
    if (term === null) return;
    var re; try { re = new RegExp(term); } catch (e) { window.alert(e); return; }
    var spans = [];
    frames.forEach(function (g) {
      var hit = term !== "" && re.test(g.getAttribute("data-n")) && num(g, "d") > 0;
      g.querySelector("rect").setAttribute("fill", hit ? "rgb(230,0,230)" : g.getAttribute("data-c"));
      if (hit) spans.push([num(g, "x"), num(g, "w")]);
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var total = 0, end = 0;
    spans.forEach(function (s) { // a callee inside a matched caller counts once
      if (s[0] + s[1] > end) { total += s[0] + s[1] - Math.max(s[0], end); end = s[0] + s[1]; }
    });
    matched.textContent = term === "" ? "" : "Matched: " + (100 * total).toFixed(1) + "%";
  }
  frames.forEach(function (g) {
    g.addEventListener("click", function () { zoom(g); });
    g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
  });
  reset.addEventListener("click", unzoom);
  search.addEventListener("click", find);
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); find(); }
    if (e.key === "Escape") unzoom();
  });
})();
`
