package calltree_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeDOM runs the flame graph's script in node against stand-ins for
// the few DOM calls it makes, clicks frame CLICK, then searches for
// SEARCH, and prints every frame's state as JSON.
const fakeDOM = `
const frames = JSON.parse(require("fs").readFileSync(process.env.FRAMES, "utf8"));
class El {
  constructor(attrs) { this.attrs = attrs || {}; this.style = {}; this.on = {}; this.textContent = ""; this.kids = {}; }
  getAttribute(k) { return k in this.attrs ? String(this.attrs[k]) : null; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  querySelector(s) { return this.kids[s]; }
  addEventListener(ev, fn) { this.on[ev] = fn; }
}
const gs = frames.map(f => {
  const g = new El({"data-x": f.x, "data-w": f.w, "data-d": f.d, "data-n": f.n, "data-c": f.c});
  g.kids.rect = new El({fill: f.c}); g.kids.text = new El(); g.kids.title = new El(); g.kids.title.textContent = f.n;
  return g;
});
const svg = new El({"data-pad": process.env.PAD, "data-inner": process.env.INNER});
svg.querySelectorAll = () => gs;
const byId = {flame: svg, details: new El(), matched: new El(), reset: new El(), search: new El()};
global.document = {getElementById: id => byId[id]};
global.window = {prompt: () => process.env.SEARCH, alert: () => {}, addEventListener: () => {}};
require(process.env.SCRIPT);
gs[+process.env.CLICK].on.click();
byId.search.on.click();
console.log(JSON.stringify({matched: byId.matched.textContent, frames: gs.map(g => ({
  shown: g.style.display !== "none", x: +g.kids.rect.getAttribute("x"), w: +g.kids.rect.getAttribute("width"),
  fill: g.kids.rect.getAttribute("fill"), label: g.kids.text.textContent}))}));
`

type jsFrame struct {
	X float64 `json:"x"`
	W float64 `json:"w"`
	D int     `json:"d"`
	N string  `json:"n"`
	C string  `json:"c"`
}

// TestFlameZoomSearch clicks a frame and searches a name in the flame
// graph's script, run by node: the frame and its callees fill the width,
// its callers span it, the rest hide; the search colours exactly the
// frames of that name.
func TestFlameZoomSearch(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	chunks, _ := timedGraphTraffic(8, 20000, 30, 2, 2)
	_, tr := liveRun(t, chunks)
	var buf bytes.Buffer
	if err := tr.WriteFlameSVG(&buf, nil); err != nil {
		t.Fatal(err)
	}
	var frames []jsFrame
	var pad, inner string
	svg := buf.Bytes()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			attr := map[string]string{}
			for _, a := range se.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch {
			case se.Name.Local == "svg":
				pad, inner = attr["data-pad"], attr["data-inner"]
			case se.Name.Local == "g" && attr["class"] == "f":
				x, _ := strconv.ParseFloat(attr["data-x"], 64)
				w, _ := strconv.ParseFloat(attr["data-w"], 64)
				d, _ := strconv.Atoi(attr["data-d"])
				frames = append(frames, jsFrame{x, w, d, attr["data-n"], attr["data-c"]})
			}
		}
	}
	// Click the widest frame at depth 2.
	click := -1
	for i, f := range frames {
		if f.D == 2 && (click < 0 || f.W > frames[click].W) {
			click = i
		}
	}
	if click < 0 || frames[click].W > 0.9 {
		t.Fatalf("no depth-2 frame to zoom into (%d frames)", len(frames))
	}
	z := frames[click]
	search := frames[click].N
	_, script, _ := strings.Cut(string(svg), "<![CDATA[")
	script, _, _ = strings.Cut(script, "]]>")
	dir := t.TempDir()
	sf := filepath.Join(dir, "flame.js")
	df := filepath.Join(dir, "dom.js")
	if os.WriteFile(sf, []byte(script), 0o644) != nil || os.WriteFile(df, []byte(fakeDOM), 0o644) != nil {
		t.Fatal("cannot write the scripts")
	}
	fj, _ := json.Marshal(frames)
	ff := filepath.Join(dir, "frames.json")
	if err := os.WriteFile(ff, fj, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, df)
	cmd.Env = append(os.Environ(), "FRAMES="+ff, "PAD="+pad, "INNER="+inner, "SCRIPT="+sf,
		"CLICK="+strconv.Itoa(click), "SEARCH="+regexpQuote(search))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Matched string
		Frames  []struct {
			Shown       bool
			X, W        float64
			Fill, Label string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	p, _ := strconv.ParseFloat(pad, 64)
	in, _ := strconv.ParseFloat(inner, 64)
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.02 }
	const eps = 1e-9
	for i, f := range frames {
		g := got.Frames[i]
		inside := f.D >= z.D && f.X >= z.X-eps && f.X+f.W <= z.X+z.W+eps
		caller := f.D < z.D && f.X <= z.X+eps && f.X+f.W >= z.X+z.W-eps
		switch {
		case i == click || caller:
			if !g.Shown || !near(g.X, p) || !near(g.W, in) {
				t.Errorf("frame %d (%s, depth %d): shown %v at %g+%g; want the full width %g+%g", i, f.N, f.D, g.Shown, g.X, g.W, p, in)
			}
		case inside && f.W/z.W*in >= 0.1:
			if !g.Shown || !near(g.X, p+(f.X-z.X)/z.W*in) || !near(g.W, f.W/z.W*in) {
				t.Errorf("callee %d (%s): shown %v at %g+%g", i, f.N, g.Shown, g.X, g.W)
			}
		case !inside:
			if g.Shown {
				t.Errorf("frame %d (%s, depth %d) outside the zoomed one is shown", i, f.N, f.D)
			}
		}
		if hit := f.N == search && f.D > 0; hit != (g.Fill == "rgb(230,0,230)") {
			t.Errorf("frame %d (%s): fill %s after searching %q", i, f.N, g.Fill, search)
		}
	}
	if !strings.HasPrefix(got.Matched, "Matched: ") || got.Frames[click].Label == "" {
		t.Errorf("matched %q, label of the zoomed frame %q", got.Matched, got.Frames[click].Label)
	}
}

func regexpQuote(s string) string {
	var b strings.Builder
	b.WriteByte('^')
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('$')
	return b.String()
}
