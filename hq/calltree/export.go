package calltree

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format is an export format.
type Format uint8

// Export formats.
const (
	FormatSpeedscope Format = iota + 1 // speedscope's file format, one evented profile per thread
	FormatChrome                       // Chrome trace-event JSON (B/E events)
	FormatFlameSVG                     // flame graph, SVG with its script
	FormatFlameHTML                    // the same SVG inline in an HTML page
)

var formatNames = [...]string{
	FormatSpeedscope: "speedscope", FormatChrome: "chrome", FormatFlameSVG: "flame", FormatFlameHTML: "flame-html",
}

func (f Format) String() string {
	if int(f) < len(formatNames) && formatNames[f] != "" {
		return formatNames[f]
	}
	return "UNKNOWN_FORMAT_" + strconv.Itoa(int(f))
}

// ParseFormat parses a format name: speedscope, chrome, flame (SVG) or
// flame-html.
func ParseFormat(s string) (Format, error) {
	for f, n := range formatNames {
		if n != "" && n == strings.ToLower(s) {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want speedscope, chrome, flame or flame-html)", ErrFormat, s)
}

// Options are what an export adds to the tree's data.
type Options struct {
	// Title names the profile (e.g. "run 3 of 192.0.2.7").
	Title string
	// ByCalls sizes flame graph frames by calls instead of time. A tree
	// whose calls all took 0 ms is drawn by calls anyway.
	ByCalls bool
}

// Write writes the tree in format f to w.
func (t *Tree) Write(w io.Writer, f Format, opt *Options) error {
	if opt == nil {
		opt = &Options{}
	}
	switch f {
	case FormatSpeedscope:
		return t.WriteSpeedscope(w, opt)
	case FormatChrome:
		return t.WriteChrome(w, opt)
	case FormatFlameSVG:
		return t.WriteFlameSVG(w, opt)
	case FormatFlameHTML:
		return t.WriteFlameHTML(w, opt)
	}
	return fmt.Errorf("%w: %v", ErrFormat, f)
}

// timelineEvent is one open or close of a frame.
type timelineEvent struct {
	at      int32
	frame   int32
	close   bool
	bubbled bool
}

// timeline calls fn with the events of thread th in order, then closes
// the frames still open (a run not finished) at the thread's last time.
func (t *Tree) timeline(th *thread, fn func(e timelineEvent)) {
	var open []int32
	for _, b := range th.events.blocks {
		for _, ev := range b {
			e := timelineEvent{at: int32(uint32(ev >> 32)), frame: int32(uint32(ev) >> evFrameShift),
				close: ev&evClose != 0, bubbled: ev&evBubbled != 0}
			if e.close {
				open = open[:len(open)-1]
			} else {
				open = append(open, e.frame)
			}
			fn(e)
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		fn(timelineEvent{at: th.last, frame: open[i], close: true})
	}
}

// jsonWriter writes JSON by hand, keeping the first error.
type jsonWriter struct {
	w   *bufio.Writer
	err error
	num []byte
}

func newJSONWriter(w io.Writer) *jsonWriter {
	return &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (j *jsonWriter) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jsonWriter) str(s string) {
	b, _ := json.Marshal(s) // a string always marshals
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
}

func (j *jsonWriter) int(n int64) {
	j.num = strconv.AppendInt(j.num[:0], n, 10)
	if j.err == nil {
		_, j.err = j.w.Write(j.num)
	}
}

// micros writes ns nanoseconds as microseconds, with up to three decimals.
func (j *jsonWriter) micros(ns int64) {
	j.num = strconv.AppendInt(j.num[:0], ns/1000, 10)
	if f := ns % 1000; f != 0 {
		if f < 0 {
			f = -f
		}
		j.num = append(j.num, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	if j.err == nil {
		_, j.err = j.w.Write(j.num)
	}
}

func (j *jsonWriter) flush() error {
	if j.err == nil {
		j.err = j.w.Flush()
	}
	return j.err
}

// SpeedscopeSchema is the $schema of speedscope's file format.
const SpeedscopeSchema = "https://www.speedscope.app/file-format-schema.json"

// Exporter names the program in exported files.
const Exporter = "tadpole-hq"

// WriteSpeedscope writes speedscope's file format: the methods as shared
// frames and one evented profile (in milliseconds) per thread.
func (t *Tree) WriteSpeedscope(w io.Writer, opt *Options) error {
	j := newJSONWriter(w)
	j.raw(`{"$schema":`)
	j.str(SpeedscopeSchema)
	j.raw(`,"exporter":`)
	j.str(Exporter)
	j.raw(`,"name":`)
	j.str(t.title(opt))
	j.raw(`,"activeProfileIndex":0,"shared":{"frames":[`)
	for i, m := range t.frames {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"name":`)
		j.str(t.MethodName(m))
		j.raw("}")
	}
	j.raw(`]},"profiles":[`)
	first := true
	for tid, th := range t.threads {
		if th == nil || th.events.n == 0 {
			continue
		}
		if !first {
			j.raw(",")
		}
		first = false
		start := int64(int32(uint32(th.events.blocks[0][0] >> 32)))
		j.raw(`{"type":"evented","name":`)
		j.str(fmt.Sprintf("%s (thread %d)", t.ThreadName(uint16(tid)), tid))
		j.raw(`,"unit":"milliseconds","startValue":`)
		j.int(start)
		j.raw(`,"endValue":`)
		j.int(int64(th.last))
		j.raw(`,"events":[`)
		n := 0
		t.timeline(th, func(e timelineEvent) {
			if n > 0 {
				j.raw(",")
			}
			n++
			if e.close {
				j.raw(`{"type":"C","frame":`)
			} else {
				j.raw(`{"type":"O","frame":`)
			}
			j.int(int64(e.frame))
			j.raw(`,"at":`)
			j.int(int64(e.at))
			j.raw("}")
		})
		j.raw("]}")
	}
	j.raw("]}\n")
	return j.flush()
}

const nsPerMs = 1_000_000

// chromePID is the process id of Chrome trace events: a trace holds one
// run, one process.
const chromePID = 1

// WriteChrome writes Chrome's trace-event JSON: a process_name and one
// thread_name metadata event, then for each thread its calls as B and E
// events, in order. An E of a call that ended by an exception has
// args.exception set. Timestamps are in microseconds; as the events have
// millisecond resolution, the events of a thread within one millisecond
// are spread 1 ns apart, in order, so that viewers which sort by time
// (Perfetto) keep calls of 0 ms nested as they were.
func (t *Tree) WriteChrome(w io.Writer, opt *Options) error {
	j := newJSONWriter(w)
	j.raw(`{"displayTimeUnit":"ms","otherData":{"exporter":`)
	j.str(Exporter)
	j.raw(`},"traceEvents":[{"ph":"M","name":"process_name","pid":`)
	j.int(chromePID)
	j.raw(`,"tid":0,"args":{"name":`)
	j.str(t.title(opt))
	j.raw("}}")
	for tid, th := range t.threads {
		if th == nil || th.events.n == 0 {
			continue
		}
		j.raw(",\n")
		j.raw(`{"ph":"M","name":"thread_name","pid":`)
		j.int(chromePID)
		j.raw(`,"tid":`)
		j.int(int64(tid))
		j.raw(`,"args":{"name":`)
		j.str(t.ThreadName(uint16(tid)))
		j.raw("}}")
	}
	names := make([]string, len(t.frames))
	for i, m := range t.frames {
		b, _ := json.Marshal(t.MethodName(m))
		names[i] = string(b)
	}
	for tid, th := range t.threads {
		if th == nil || th.events.n == 0 {
			continue
		}
		var ms int32
		var k int64 // events so far in millisecond ms
		t.timeline(th, func(e timelineEvent) {
			if e.at != ms || k == 0 {
				ms, k = e.at, 0
			}
			ns := int64(e.at)*nsPerMs + min(k, nsPerMs-1)
			k++
			if e.close {
				j.raw(",\n{\"ph\":\"E\",\"name\":")
			} else {
				j.raw(",\n{\"ph\":\"B\",\"cat\":\"method\",\"name\":")
			}
			j.raw(names[e.frame])
			j.raw(`,"pid":`)
			j.int(chromePID)
			j.raw(`,"tid":`)
			j.int(int64(tid))
			j.raw(`,"ts":`)
			j.micros(ns)
			if e.bubbled {
				j.raw(`,"args":{"exception":true}`)
			}
			j.raw("}")
		})
	}
	j.raw("]}\n")
	return j.flush()
}

// title is the name of an export.
func (t *Tree) title(opt *Options) string {
	if opt != nil && opt.Title != "" {
		return opt.Title
	}
	if r := t.report; r != nil {
		return fmt.Sprintf("tadpole run %d (%s)", r.RunID, r.Agent)
	}
	return "tadpole run"
}
