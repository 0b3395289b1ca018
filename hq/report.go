package hq

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// SeqRange is an inclusive range of sequence numbers.
type SeqRange struct{ From, To int32 }

// Len returns the count of numbers in r (wrap-aware).
func (r SeqRange) Len() int64 { return int64(uint32(r.To-r.From)) + 1 }

func (r SeqRange) String() string {
	if r.From == r.To {
		return fmt.Sprint(r.From)
	}
	return fmt.Sprintf("%d..%d", r.From, r.To)
}

// UnmappedID is an id that events used before (or without) its mapping.
type UnmappedID struct {
	Kind     IDKind
	ID       int64
	Count    int64 // events that used it while it was unmapped
	FirstSeq int32 // the first such event
}

// MethodCalls is a method with its call count (MethodEntry plus
// MethodVisit events).
type MethodCalls struct {
	ID        int32
	Signature string // "" when never mapped
	Calls     int64
}

// ExceptionCount counts Exception (thrown) and ExceptionBubble events of
// one exception class.
type ExceptionCount struct {
	Name            string
	Thrown, Bubbled int64
}

// Marker is a Marker event.
type Marker struct {
	Seq        int32
	Key, Value string
}

// ClassCounts counts the agent's class reports (messages 40–42).
type ClassCounts struct {
	Transformed, Ignored, Failed int64
	FailedNames                  []string // the first few
}

// Command is a message HQ sent on the control connection.
type Command struct {
	Type bytefrog.MsgType
	At   time.Duration // since the run started
}

// Report is the outcome and summary of one run. Lists are capped (1000
// entries; the counters are exact).
type Report struct {
	RunID        uint8
	Agent        string // remote address of the control connection
	Version      uint8  // protocol version from Hello
	Flavor       bytefrog.Flavor
	ProjectID    int32 // ProjectHello (v4)
	HasProjectID bool
	Start, End   time.Time

	// OK is true when the run ended normally ('X' heartbeat or Stop, then
	// EOF on every connection) with gap-free, duplicate-free data; Reason
	// says why not.
	OK     bool
	Reason string

	Events    map[bytefrog.MsgType]int64 // messages received, by type
	Sequenced int64                      // sequenced events released
	Bytes     int64                      // bytes received on all connections
	DataConns int
	Commands  []Command // sent by HQ, in order

	Heartbeats        int64
	LastMode          bytefrog.Mode
	MaxHeartbeatGap   time.Duration // longest silence on the control connection
	UnhealthyEpisodes int           // silences of more than 3 heartbeat intervals
	LateHeartbeats    int64         // heartbeats more than 1.5 intervals after the one before

	Gaps           []SeqRange // numbers that never arrived
	GapCount       int
	Missing        int64
	Duplicates     []int32 // numbers that arrived again after release
	DuplicateCount int64
	Late           int64 // events that arrived after their gap was given up
	OutOfOrder     int64 // events whose number went backwards on a connection

	Unmapped         []UnmappedID
	UnmappedOverflow int64 // unmapped uses not listed
	Remapped         int64 // method or exception mappings that renamed an id

	// Call nesting per thread, checked between data breaks.
	StackFaults    int64 // exits, bubbles or throws not of the innermost call
	UnmatchedExits int64 // exits of calls entered before tracing or a break
	DeepStacks     int64 // threads whose stack outgrew what HQ keeps
	// InWindow counts events (markers too) stamped more than ModeSlack ms inside a window
	// in which HQ had told the agent not to collect (suspend, pause, stop).
	InWindow int64

	DataBreaks []int32 // delivered right before their event (or at the end)
	LateBreaks []int32 // arrived after their number had been released

	Markers     int64
	LastMarkers []Marker
	TopMethods  []MethodCalls
	TopByTime   []MethodTime // by self time (calls.go)
	BubblePaths []BubblePath // the longest path of the first exception classes
	Methods     int          // method ids mapped
	Exceptions  []ExceptionCount
	ExitsThrown int64 // Code Pulse MethodExit with exceptionThrown set
	ThreadNames map[uint16]string
	Classes     ClassCounts

	Warnings  []string
	TraceFile string // "" when none was written
}

// Duration returns how long the run lasted.
func (r *Report) Duration() time.Duration { return r.End.Sub(r.Start) }

// maxListedThreads is how many thread names a summary lists.
const maxListedThreads = 12

// listNames lists names by thread id, at most max of them.
func listNames(names map[uint16]string, max int) string {
	ids := make([]uint16, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for i, id := range ids {
		if i == max {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(names[id])
	}
	return b.String()
}

// Result returns "completed" or "failed: <reason>".
func (r *Report) Result() string {
	if r.OK {
		return "completed"
	}
	return "failed: " + r.Reason
}

func (r *Report) warn(s string) {
	if len(r.Warnings) < maxWarnings {
		r.Warnings = append(r.Warnings, s)
	}
}

// String returns the summary Write prints.
func (r *Report) String() string {
	var b bytes.Buffer
	r.Write(&b)
	return b.String()
}

// Write prints a summary for a person: identity, result, events by type,
// top methods, exceptions, markers and the data checks.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	project := ""
	if r.HasProjectID {
		project = fmt.Sprintf(" project %d", r.ProjectID)
	}
	p("run %d  agent %s  protocol v%d %s%s  duration %v\n", r.RunID, r.Agent, r.Version, r.Flavor, project,
		r.Duration().Round(time.Millisecond))
	p("  result: %s\n", r.Result())

	p("  events: %s sequenced; %s bytes received; %d data connection(s)\n", count(r.Sequenced), count(r.Bytes), r.DataConns)
	types := make([]bytefrog.MsgType, 0, len(r.Events))
	for t := range r.Events {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		p("    %-22s %12s\n", t, count(r.Events[t]))
	}
	if r.ExitsThrown > 0 {
		p("    (%s exits by exception)\n", count(r.ExitsThrown))
	}

	if len(r.TopMethods) > 0 {
		p("  top methods by calls (%d mapped):\n", r.Methods)
		for _, m := range r.TopMethods {
			sig := m.Signature
			if sig == "" {
				sig = fmt.Sprintf("<unmapped method id %d>", m.ID)
			}
			p("    %12s  %s\n", count(m.Calls), sig)
		}
	}
	if len(r.Exceptions) > 0 {
		p("  exceptions by class (thrown / bubbled):\n")
		for _, x := range r.Exceptions {
			p("    %8s / %-8s %s\n", count(x.Thrown), count(x.Bubbled), x.Name)
		}
	}
	if len(r.TopByTime) > 0 {
		p("  top methods by self time (ms, calls):\n")
		for _, m := range r.TopByTime {
			p("    %12s  %-10s %s\n", count(m.SelfMs), count(m.Calls), orID(m.Signature, "method", m.ID))
		}
	}
	for _, bp := range r.BubblePaths {
		p("  exception path: %s\n", bp.Path())
	}
	if r.Markers > 0 {
		p("  markers: %s; the last %d:\n", count(r.Markers), len(r.LastMarkers))
		for _, m := range r.LastMarkers {
			p("    %s = %s\n", m.Key, m.Value)
		}
	}
	if c := r.Classes; c.Transformed+c.Ignored+c.Failed > 0 {
		p("  classes: %s transformed, %s ignored, %s failed", count(c.Transformed), count(c.Ignored), count(c.Failed))
		if len(c.FailedNames) > 0 {
			p(" (%s)", strings.Join(c.FailedNames, ", "))
		}
		p("\n")
	}
	if len(r.ThreadNames) > 0 {
		p("  threads: %d named: %s\n", len(r.ThreadNames), listNames(r.ThreadNames, maxListedThreads))
	}

	p("  checks: %s\n", r.Checks())
	if len(r.Gaps) > 0 {
		p("    gaps at %s\n", listRanges(r.Gaps, r.GapCount))
	}
	if len(r.Duplicates) > 0 {
		p("    duplicates at %s\n", listInts(r.Duplicates, int(r.DuplicateCount)))
	}
	if len(r.Unmapped) > 0 {
		p("    used before mapping:")
		for i, u := range r.Unmapped {
			if i == 10 {
				p(" …")
				break
			}
			p(" %s %d (%s× from seq %d)", u.Kind, u.ID, count(u.Count), u.FirstSeq)
		}
		p("\n")
	}
	if len(r.DataBreaks) > 0 || len(r.LateBreaks) > 0 {
		p("  data breaks: %d", len(r.DataBreaks))
		if len(r.DataBreaks) > 0 {
			p(" at %s", listInts(r.DataBreaks, len(r.DataBreaks)))
		}
		if len(r.LateBreaks) > 0 {
			p("; %d late (number already passed): %s", len(r.LateBreaks), listInts(r.LateBreaks, len(r.LateBreaks)))
		}
		p("\n")
	}
	if len(r.Commands) > 0 {
		p("  commands:")
		for i, c := range r.Commands {
			if i == 20 {
				p(" …")
				break
			}
			p(" %s@%v", c.Type, c.At.Round(time.Millisecond))
		}
		p("\n")
	}
	p("  heartbeats: %s, last mode %s, longest silence %v", count(r.Heartbeats), modeName(r.LastMode),
		r.MaxHeartbeatGap.Round(time.Millisecond))
	if r.UnhealthyEpisodes > 0 {
		p(", unhealthy %d time(s)", r.UnhealthyEpisodes)
	}
	p("\n")
	for _, s := range r.Warnings {
		p("  warning: %s\n", s)
	}
	if r.TraceFile != "" {
		p("  trace file: %s\n", r.TraceFile)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Checks summarises the data checks on one line.
func (r *Report) Checks() string {
	var parts []string
	if r.GapCount > 0 {
		parts = append(parts, fmt.Sprintf("%d gap(s), %s events missing", r.GapCount, count(r.Missing)))
	}
	if r.DuplicateCount > 0 {
		parts = append(parts, fmt.Sprintf("%s duplicate(s)", count(r.DuplicateCount)))
	}
	if r.Late > 0 {
		parts = append(parts, fmt.Sprintf("%s late", count(r.Late)))
	}
	if r.OutOfOrder > 0 {
		parts = append(parts, fmt.Sprintf("%s out of order within a connection", count(r.OutOfOrder)))
	}
	if n := len(r.Unmapped); n > 0 || r.UnmappedOverflow > 0 {
		parts = append(parts, fmt.Sprintf("%d id(s) used before mapping", n))
	}
	if r.Remapped > 0 {
		parts = append(parts, fmt.Sprintf("%s id(s) mapped again to a different name", count(r.Remapped)))
	}
	if r.StackFaults > 0 {
		parts = append(parts, fmt.Sprintf("%s event(s) out of call nesting", count(r.StackFaults)))
	}
	if r.InWindow > 0 {
		parts = append(parts, fmt.Sprintf("%s event(s) stamped inside a suspend, pause or stop", count(r.InWindow)))
	}
	if r.LateHeartbeats > 0 {
		parts = append(parts, fmt.Sprintf("%s heartbeat(s) late by over half an interval", count(r.LateHeartbeats)))
	}
	if len(parts) == 0 {
		return "sequence complete, no duplicates, all ids mapped, calls nest, no event in a mode window"
	}
	return strings.Join(parts, "; ")
}

func modeName(m bytefrog.Mode) string {
	if m == 0 {
		return "none"
	}
	return m.String()
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func listRanges(rs []SeqRange, total int) string {
	var parts []string
	for i, r := range rs {
		if i == 10 {
			break
		}
		parts = append(parts, r.String())
	}
	s := strings.Join(parts, ", ")
	if total > len(parts) {
		s += fmt.Sprintf(" … (%d in all)", total)
	}
	return s
}

func listInts(v []int32, total int) string {
	var parts []string
	for i, x := range v {
		if i == 10 {
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	s := strings.Join(parts, ", ")
	if total > len(parts) {
		s += fmt.Sprintf(" … (%d in all)", total)
	}
	return s
}

func orID(name, kind string, id int32) string {
	if name == "" {
		return fmt.Sprintf("<unmapped %s id %d>", kind, id)
	}
	return name
}

// Path describes the exception's way: "X thrown in m:line, bubbled out of
// a ← b, caught in c".
func (p *BubblePath) Path() string {
	var b strings.Builder
	b.WriteString(orID(p.Exception, "exception", p.excID))
	if p.throwerID >= 0 {
		fmt.Fprintf(&b, " thrown in %s", orID(p.Thrower, "method", p.throwerID))
		if p.Line != bytefrog.NoLine {
			fmt.Fprintf(&b, " line %d", p.Line)
		}
	} else {
		b.WriteString(" thrown in untraced code")
	}
	if len(p.Bubbled) > 0 {
		b.WriteString(", bubbled out of ")
		b.WriteString(strings.Join(p.Bubbled, " → "))
	}
	if p.Caught != "" {
		fmt.Fprintf(&b, ", caught in %s", p.Caught)
	} else {
		b.WriteString(", left the thread's outermost traced call")
	}
	return b.String()
}
