package calltree_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

type ssEvent struct {
	Type  string  `json:"type"`
	Frame int     `json:"frame"`
	At    float64 `json:"at"`
}

type ssProfile struct {
	Type       string    `json:"type"`
	Name       string    `json:"name"`
	Unit       string    `json:"unit"`
	StartValue float64   `json:"startValue"`
	EndValue   float64   `json:"endValue"`
	Events     []ssEvent `json:"events"`
}

type ssFile struct {
	Schema string `json:"$schema"`
	Shared struct {
		Frames []struct {
			Name string `json:"name"`
		} `json:"frames"`
	} `json:"shared"`
	Profiles []ssProfile `json:"profiles"`
}

func decodeSpeedscope(t *testing.T, b []byte) *ssFile {
	t.Helper()
	var f ssFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("speedscope JSON: %v", err)
	}
	return &f
}

// checkSpeedscope validates a speedscope file against the published schema
// and checks what speedscope's importer of evented profiles relies on:
// frames in range, each close the innermost open frame, times in order
// and within [startValue, endValue], nothing left open.
func checkSpeedscope(t *testing.T, b []byte) *ssFile {
	t.Helper()
	if err := loadSchema(t, speedscopeSchemaPath).validate(b); err != nil {
		t.Fatalf("speedscope file fails the schema: %v", err)
	}
	f := decodeSpeedscope(t, b)
	for _, p := range f.Profiles {
		var open []int
		last := p.StartValue
		for i, e := range p.Events {
			if e.Frame < 0 || e.Frame >= len(f.Shared.Frames) {
				t.Fatalf("%s: event %d: frame %d of %d", p.Name, i, e.Frame, len(f.Shared.Frames))
			}
			if e.At < last || e.At > p.EndValue {
				t.Fatalf("%s: event %d at %g: after %g, within [%g, %g]", p.Name, i, e.At, last, p.StartValue, p.EndValue)
			}
			last = e.At
			switch e.Type {
			case "O":
				open = append(open, e.Frame)
			case "C":
				if len(open) == 0 || open[len(open)-1] != e.Frame {
					t.Fatalf("%s: event %d closes frame %d; open %v", p.Name, i, e.Frame, open)
				}
				open = open[:len(open)-1]
			}
		}
		if len(open) > 0 {
			t.Fatalf("%s: frames %v left open", p.Name, open)
		}
	}
	return f
}

type chromeEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Pid  *int           `json:"pid"`
	Tid  *int           `json:"tid"`
	Ts   *float64       `json:"ts"`
	Args map[string]any `json:"args"`
}

// checkChrome checks a Chrome trace-event file as the Trace Event Format
// describes it (JSON object form): traceEvents is an array; every event
// has ph, pid and tid; B and E have ts (µs); per thread each E ends the
// innermost B (same name), ts increases (strictly: ties would let a viewer
// that sorts by time unnest calls), and every B is ended; each
// thread with events has a thread_name metadata event. It returns the
// B events per thread.
func checkChrome(t *testing.T, b []byte, tr *calltree.Tree) map[int]int {
	t.Helper()
	var f struct {
		TraceEvents     []chromeEvent `json:"traceEvents"`
		DisplayTimeUnit string        `json:"displayTimeUnit"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil && !strings.Contains(err.Error(), `unknown field "otherData"`) {
		t.Fatalf("Chrome JSON: %v", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.DisplayTimeUnit != "ms" && f.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit %q", f.DisplayTimeUnit)
	}
	stacks := map[int][]string{}
	last := map[int]float64{}
	begins := map[int]int{}
	named := map[int]string{}
	for i, e := range f.TraceEvents {
		if e.Ph == "" || e.Pid == nil || e.Tid == nil {
			t.Fatalf("event %d: %+v lacks ph, pid or tid", i, e)
		}
		tid := *e.Tid
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				named[tid], _ = e.Args["name"].(string)
			}
			continue
		case "B", "E":
		default:
			t.Fatalf("event %d: phase %q", i, e.Ph)
		}
		if e.Ts == nil {
			t.Fatalf("event %d: no ts", i)
		}
		if l, ok := last[tid]; ok && *e.Ts <= l {
			t.Fatalf("event %d: tid %d ts %g after %g", i, tid, *e.Ts, l)
		}
		last[tid] = *e.Ts
		if e.Ph == "B" {
			if e.Name == "" {
				t.Fatalf("event %d: B without a name", i)
			}
			stacks[tid] = append(stacks[tid], e.Name)
			begins[tid]++
			continue
		}
		st := stacks[tid]
		if len(st) == 0 || (e.Name != "" && st[len(st)-1] != e.Name) {
			t.Fatalf("event %d: E %q on tid %d; open %q", i, e.Name, tid, st)
		}
		stacks[tid] = st[:len(st)-1]
	}
	for tid, st := range stacks {
		if len(st) > 0 {
			t.Errorf("tid %d: %q never ended", tid, st)
		}
		if named[tid] != tr.ThreadName(uint16(tid)) {
			t.Errorf("tid %d: thread_name %q; want %q", tid, named[tid], tr.ThreadName(uint16(tid)))
		}
	}
	return begins
}

// checkFlame parses a flame graph as XML and returns its text (titles and
// labels).
func checkFlame(t *testing.T, b []byte, html bool) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	if html {
		dec.Strict = false
		dec.AutoClose = xml.HTMLAutoClose
		dec.Entity = xml.HTMLEntity
	}
	var text strings.Builder
	svgs, frames := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("flame graph is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "svg" {
				svgs++
			}
			if tok.Name.Local == "g" {
				for _, a := range tok.Attr {
					if a.Name.Local == "class" && a.Value == "f" {
						frames++
					}
				}
			}
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if svgs != 1 || frames < 2 {
		t.Fatalf("flame graph has %d svg elements, %d frames", svgs, frames)
	}
	return text.String()
}

func TestExports(t *testing.T) {
	chunks, _ := timedTraffic(2, 30000, 30, 3)
	rep, tr := liveRun(t, chunks)

	var buf bytes.Buffer
	if err := tr.WriteSpeedscope(&buf, nil); err != nil {
		t.Fatal(err)
	}
	doc := checkSpeedscope(t, buf.Bytes())
	if len(doc.Profiles) != 3 {
		t.Errorf("%d profiles; want one per thread (3)", len(doc.Profiles))
	}
	opens := 0
	for _, p := range doc.Profiles {
		for _, e := range p.Events {
			if e.Type == "O" {
				opens++
			}
		}
	}
	if int64(opens) != tr.Stats().Calls {
		t.Errorf("speedscope opens %d frames; %d calls", opens, tr.Stats().Calls)
	}
	if !strings.Contains(buf.String(), calltree.DisplayName(hqtest.MethodName(0))) {
		t.Error("speedscope file lacks method 0")
	}

	buf.Reset()
	if err := tr.WriteChrome(&buf, nil); err != nil {
		t.Fatal(err)
	}
	begins := checkChrome(t, buf.Bytes(), tr)
	total := 0
	for _, n := range begins {
		total += n
	}
	if int64(total) != tr.Stats().Calls || len(begins) != 3 {
		t.Errorf("Chrome trace has %d B events on %d threads; want %d calls on 3", total, len(begins), tr.Stats().Calls)
	}
	if got, want := strings.Count(buf.String(), `"exception":true`), rep.Events[bytefrog.MsgExceptionBubble]; int64(got) != want {
		t.Errorf("%d E events mark an exception; HQ counted %d bubbles", got, want)
	}

	for _, f := range []calltree.Format{calltree.FormatFlameSVG, calltree.FormatFlameHTML} {
		buf.Reset()
		if err := tr.Write(&buf, f, &calltree.Options{Title: "flame <test>"}); err != nil {
			t.Fatal(err)
		}
		text := checkFlame(t, buf.Bytes(), f == calltree.FormatFlameHTML)
		for _, want := range []string{"flame <test>", "frame width: ms", "total ", "self "} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: no %q in the text", f, want)
			}
		}
		// Every method with a millisecond or more of its own shows.
		for _, m := range tr.Methods() {
			if m.Self > 0 && !strings.Contains(text, calltree.DisplayName(m.Signature)+": total") {
				t.Errorf("%v: method %s (self %d ms) missing", f, m.Signature, m.Self)
			}
		}
		if strings.Contains(buf.String(), "http://") && !strings.Contains(buf.String(), `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("%v refers to another resource", f)
		}
		for _, ref := range []string{"<script src", "href=", "@import", "url("} {
			if strings.Contains(buf.String(), ref) {
				t.Errorf("%v: %q: the file must need nothing else", f, ref)
			}
		}
	}
}

// TestFlameByCalls: a run whose calls all took 0 ms is drawn by calls.
func TestFlameByCalls(t *testing.T) {
	chunks, _ := hqtest.Generate(hqtest.Workload{Events: 20000, Methods: 20, Threads: 2, Chunk: 2048, Seed: 5})
	_, tr := liveRun(t, chunks)
	if tr.Node(calltree.Root).Total != 0 {
		t.Fatal("hqtest traffic took time")
	}
	var buf bytes.Buffer
	if err := tr.WriteFlameSVG(&buf, nil); err != nil {
		t.Fatal(err)
	}
	text := checkFlame(t, buf.Bytes(), false)
	if !strings.Contains(text, "frame width: calls (every call took under 1 ms)") {
		t.Error("the graph does not say it is drawn by calls")
	}
	for id := range int32(3) {
		if !strings.Contains(text, calltree.DisplayName(hqtest.MethodName(id))) {
			t.Errorf("method %d missing", id)
		}
	}
}
