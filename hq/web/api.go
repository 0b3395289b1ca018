package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
)

// RunInfo is one run as GET /api/runs lists it.
type RunInfo struct {
	Key        int       `json:"key"` // the page's number for the run (run ids are reused)
	ID         uint8     `json:"id"`
	Agent      string    `json:"agent"`
	Version    uint8     `json:"version"`
	Mode       string    `json:"mode"`
	Health     string    `json:"health"`
	Events     int64     `json:"events"`
	Bytes      int64     `json:"bytes"`
	Rate       float64   `json:"rate"`  // events/s over the last tick
	Rates      []float64 `json:"rates"` // one per tick, oldest first
	TickMs     int64     `json:"tickMs"`
	Started    int64     `json:"started"` // Unix ms
	Buffers    uint16    `json:"buffers"`
	DataConns  int       `json:"dataConns"`
	Heartbeats int64     `json:"heartbeats"`
	Commands   []Command `json:"commands"`
	Ended      bool      `json:"ended"`
	Result     string    `json:"result,omitempty"`
	OK         bool      `json:"ok"`
	Paths      int       `json:"paths"`
	Calls      int64     `json:"calls"`
	Threads    int       `json:"threads"`
	Warnings   []string  `json:"warnings,omitempty"`
	// The page's own losses when it fell behind the run (HQ's counts and
	// trace file are complete): calls and markers left out, and the data
	// breaks it made.
	PageDropped        int64 `json:"pageDropped"`
	PageDroppedMarkers int64 `json:"pageDroppedMarkers"`
	PageBreaks         int64 `json:"pageBreaks"`
}

// Command is one entry of a run's control log.
type Command struct {
	Type string `json:"type"`
	At   int64  `json:"at"` // ms since the run started
}

func (t *tracker) info() RunInfo {
	p := &t.pub
	p.mu.RLock()
	defer p.mu.RUnlock()
	st := p.stats
	ri := RunInfo{Key: t.key, ID: st.ID, Agent: st.Agent, Mode: modeText(st.Mode.String()), Health: st.Health.String(),
		Events: st.Events, Bytes: st.Bytes, Rates: slices.Clone(p.rates), TickMs: t.cfg.Tick.Milliseconds(),
		Buffers: st.Buffers, DataConns: st.DataConns, Heartbeats: st.Heartbeats, Ended: p.ended,
		Paths: p.paths, Calls: p.tree.Calls, Threads: p.tree.Threads, Warnings: p.warnings, Commands: []Command{},
		PageDropped: t.dropped.Load(), PageDroppedMarkers: t.droppedMarkers.Load(), PageBreaks: t.breaks.Load()}
	if t.run != nil {
		ri.Version = t.run.Version()
		ri.Started = t.run.StartedAt().UnixMilli()
	}
	if n := len(p.rates); n > 0 && !p.ended {
		ri.Rate = p.rates[n-1]
	}
	for _, c := range p.commands {
		ri.Commands = append(ri.Commands, Command{Type: c.Type.String(), At: c.At.Milliseconds()})
	}
	if p.ended && p.report != nil {
		ri.Result, ri.OK = p.report.Result(), p.report.OK
		ri.Health = hq.HealthEnded.String()
		ri.Mode = modeText(p.report.LastMode.String())
	}
	return ri
}

func modeText(s string) string {
	if strings.HasPrefix(s, "UNKNOWN_MODE_0") {
		return "-"
	}
	return s
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Now  int64     `json:"now"`
		Runs []RunInfo `json:"runs"`
	}{Now: time.Now().UnixMilli(), Runs: []RunInfo{}}
	for _, t := range s.trackers() {
		if t.run == nil || t.pub.lastAtSet() {
			out.Runs = append(out.Runs, t.info())
		}
	}
	writeJSON(w, out)
}

func (p *published) lastAtSet() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return !p.lastAt.IsZero() || p.ended
}

// controls maps the page's buttons to the run's commands: the same
// Run methods a lifecycle script (-script) calls.
var controls = map[string]func(*hq.Run) error{
	"start": (*hq.Run).Start, "pause": (*hq.Run).Pause, "unpause": (*hq.Run).Unpause,
	"suspend": (*hq.Run).Suspend, "unsuspend": (*hq.Run).Unsuspend, "stop": (*hq.Run).Stop,
}

// ControlHeader must be set on control requests: a cross-site form
// cannot set it, and a cross-site script would need a CORS preflight,
// which the page never grants.
const ControlHeader = "X-Tadpole-Control"

func (s *Server) handleControl(w http.ResponseWriter, r *http.Request, t *tracker) {
	if r.Header.Get(ControlHeader) != "1" {
		http.Error(w, "web: control requests need the header "+ControlHeader+": 1", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		http.Error(w, "web: cross-origin control request refused", http.StatusForbidden)
		return
	}
	action := r.URL.Query().Get("action")
	fn, ok := controls[action]
	if !ok {
		http.Error(w, "web: action: want start, pause, unpause, suspend, unsuspend or stop", http.StatusBadRequest)
		return
	}
	if t.run == nil {
		http.Error(w, "web: no such run", http.StatusNotFound)
		return
	}
	if err := fn(t.run); err != nil {
		code := http.StatusConflict
		if errors.Is(err, hq.ErrRunEnded) {
			code = http.StatusGone
		}
		http.Error(w, err.Error(), code)
		return
	}
	writeJSON(w, map[string]string{"sent": action})
}

func (s *Server) handleFlame(w http.ResponseWriter, r *http.Request, t *tracker) {
	since, err1 := query(r, "since", 0)
	after, err2 := query(r, "after", 0)
	names, err3 := query(r, "names", 0)
	if err := errors.Join(err1, err2, err3); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(t.flameDelta(nil, since, after, names, s.cfg.DeltaNodes))
}

// flameDelta appends the JSON of the nodes changed after version since
// (from index after on; at most limit of them) and of the method names
// from the names-th on:
//
//	{"version":V,"paths":P,"shown":S,"now":T,"more":false,"resume":I,
//	 "names":[[id,"name"],...],
//	 "nodes":[[index,parent,method,calls,total,self,thrown,bubbled],...]}
//
// With more, the page asks again with the same since and after=resume;
// once it has all, it asks with since=V (of the first answer).
func (t *tracker) flameDelta(b []byte, since, after, names uint64, limit int) []byte {
	p := &t.pub
	p.mu.RLock()
	defer p.mu.RUnlock()
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, p.version, 10)
	b = append(b, `,"paths":`...)
	b = strconv.AppendInt(b, int64(p.paths), 10)
	b = append(b, `,"shown":`...)
	b = strconv.AppendInt(b, int64(len(p.vals)), 10)
	b = append(b, `,"now":`...)
	b = strconv.AppendInt(b, int64(p.now), 10)
	b = append(b, `,"ended":`...)
	b = strconv.AppendBool(b, p.ended)
	b = append(b, `,"names":[`...)
	for i := int(min(names, uint64(len(p.nameIDs)))); i < len(p.nameIDs); i++ {
		if b[len(b)-1] != '[' {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.nameIDs[i]), 10)
		b = append(b, ',')
		b = appendString(b, p.names[i])
		b = append(b, ']')
	}
	b = append(b, `],"nodes":[`...)
	n, i := 0, int(min(after, uint64(len(p.vals))))
	more := false
	for ; i < len(p.vals); i++ {
		if p.ver[i] <= since {
			continue
		}
		if n == limit {
			more = true
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		v := &p.vals[i]
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(i), 10)
		for _, x := range [...]int64{int64(v.Parent), int64(v.Method), v.Calls, v.Total, v.Self, v.Thrown, v.Bubbled} {
			b = append(b, ',')
			b = strconv.AppendInt(b, x, 10)
		}
		b = append(b, ']')
	}
	b = append(b, `],"more":`...)
	b = strconv.AppendBool(b, more)
	b = append(b, `,"resume":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, "}\n"...)
	return b
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (s *Server) handleTimeline(w http.ResponseWriter, r *http.Request, t *tracker) {
	since, err := query(r, "since", 0)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(t.timelineDelta(nil, since, s.cfg.DeltaSpans))
}

// timelineDelta appends the JSON of the timeline spans added after the
// since-th (the newest limit of them), the spans that may still grow
// (pending, sent each time), the calls still open and the thread names:
//
//	{"next":N,"skipped":K,"now":T,"threads":[[tid,"name"],...],
//	 "spans":[[tid,depth,method,start,end,count,flags],...],
//	 "pending":[...as spans...],
//	 "open":[[tid,depth,method,start],...]}
//
// flags: 1 a call ended by an exception, 2 calls of several methods.
// skipped counts the spans the page will never get (the ring overwrote
// them, or they were beyond limit).
func (t *tracker) timelineDelta(b []byte, since uint64, limit int) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.nspans
	from := min(since, n)
	oldest := n - uint64(len(t.spans))
	from = max(from, oldest)
	from = max(from, n-min(n, uint64(limit)))
	skipped := from - min(since, n)
	b = append(b, `{"next":`...)
	b = strconv.AppendUint(b, n, 10)
	b = append(b, `,"skipped":`...)
	b = strconv.AppendUint(b, skipped, 10)
	b = append(b, `,"now":`...)
	b = strconv.AppendInt(b, int64(t.lastEvent), 10)
	b = append(b, `,"threads":[`...)
	first := true
	for tid, th := range t.threads {
		if th == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, ',')
		b = appendString(b, t.tree.ThreadName(uint16(tid)))
		b = append(b, ']')
	}
	b = append(b, `],"spans":[`...)
	for k := from; k < n; k++ {
		if k > from {
			b = append(b, ',')
		}
		b = appendSpan(b, &t.spans[k%uint64(t.cfg.Spans)])
	}
	b = append(b, `],"pending":[`...)
	first = true
	for _, th := range t.threads {
		if th == nil {
			continue
		}
		for d := range th.pending {
			if th.pending[d].count == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendSpan(b, &th.pending[d])
		}
	}
	b = append(b, `],"open":[`...)
	first = true
	for tid, th := range t.threads {
		if th == nil {
			continue
		}
		for d := 0; d < len(th.stack) && d < t.cfg.SpanDepth; d++ {
			if !first {
				b = append(b, ',')
			}
			first = false
			f := th.stack[d]
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(tid), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(d), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(f.method), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(f.start), 10)
			b = append(b, ']')
		}
	}
	b = append(b, "]}\n"...)
	return b
}

func appendSpan(b []byte, sp *span) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(sp.tid), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(sp.depth), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(sp.method), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(sp.start), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(sp.end), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(sp.count), 10)
	flags := 0
	if sp.bubbled {
		flags |= 1
	}
	if sp.mixed {
		flags |= 2
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(flags), 10)
	return append(b, ']')
}

// ExceptionInfo is one exception class of a run.
type ExceptionInfo struct {
	ID      int32  `json:"id"`
	Name    string `json:"name"`
	Thrown  int64  `json:"thrown"`
	Bubbled int64  `json:"bubbled"`
}

// BubbleInfo is one way an exception took: thrown in Thrower, it ended
// the calls of Path (innermost first) and was caught in Caught ("" when it
// left the thread's outermost call).
type BubbleInfo struct {
	Exception string   `json:"exception"`
	Thrower   string   `json:"thrower"`
	Path      []string `json:"path"`
	More      bool     `json:"more,omitempty"` // Path was cut
	Caught    string   `json:"caught"`
	Count     int64    `json:"count"`
	Last      int32    `json:"last"` // ms since the run started
}

func (s *Server) handleExceptions(w http.ResponseWriter, r *http.Request, t *tracker) {
	out := struct {
		Exceptions   []ExceptionInfo `json:"exceptions"`
		Paths        []BubbleInfo    `json:"paths"`
		PathsNotKept int64           `json:"pathsNotKept"`
	}{Exceptions: []ExceptionInfo{}, Paths: []BubbleInfo{}}
	t.mu.Lock()
	for _, e := range t.tree.Exceptions() {
		out.Exceptions = append(out.Exceptions, ExceptionInfo{ID: e.ID, Name: e.Name, Thrown: e.Thrown, Bubbled: e.Bubbled})
	}
	name := func(m int32) string {
		if m < 0 {
			return ""
		}
		return t.tree.MethodName(m)
	}
	for _, b := range slices.Concat(slices.Collect(maps.Values(t.bubbles))...) {
		bi := BubbleInfo{Exception: t.tree.ExceptionName(b.exc), Thrower: name(b.thrower), More: b.more,
			Caught: name(b.caught), Count: b.count, Last: b.last, Path: []string{}}
		for _, m := range b.path {
			bi.Path = append(bi.Path, name(m))
		}
		out.Paths = append(out.Paths, bi)
	}
	out.PathsNotKept = t.bubblesX
	t.mu.Unlock()
	slices.SortFunc(out.Paths, func(a, b BubbleInfo) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Exception+a.Thrower, b.Exception+b.Thrower)
	})
	writeJSON(w, out)
}

// MarkerInfo is one marker or log record.
type MarkerInfo struct {
	N     uint64 `json:"n"`   // its number on the page (cursor)
	Seq   int32  `json:"seq"` // its sequence number in the trace
	At    int32  `json:"at"`  // ms since the run started
	Log   bool   `json:"log"` // a log record: Key is "log:" + the logger
	Key   string `json:"key"`
	Value string `json:"value"`
}

// LogPrefix starts the key of a marker made from a log record.
const LogPrefix = "log:"

func (s *Server) handleMarkers(w http.ResponseWriter, r *http.Request, t *tracker) {
	since, err := query(r, "since", 0)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	limit, err := query(r, "limit", uint64(s.cfg.DeltaMarkers))
	if err != nil || limit == 0 {
		http.Error(w, "web: limit: want a positive number", http.StatusBadRequest)
		return
	}
	limit = min(limit, uint64(s.cfg.DeltaMarkers))
	q := r.URL.Query().Get("q")
	if len(q) > maxQueryLen {
		http.Error(w, fmt.Sprintf("web: q: longer than %d bytes", maxQueryLen), http.StatusBadRequest)
		return
	}
	q = strings.ToLower(q)
	kind := r.URL.Query().Get("kind")
	switch kind {
	case "", "all", "log", "marker":
	default:
		http.Error(w, "web: kind: want all, log or marker", http.StatusBadRequest)
		return
	}
	switch r.URL.Query().Get("from") {
	case "", "newest", "oldest":
	default:
		http.Error(w, "web: from: want newest or oldest", http.StatusBadRequest)
		return
	}
	oldest := r.URL.Query().Get("from") == "oldest"
	out := struct {
		Next    uint64       `json:"next"`
		Total   uint64       `json:"total"`   // markers the run sent
		Skipped uint64       `json:"skipped"` // markers after since that no answer will hold (dropped, or passed over)
		Markers []MarkerInfo `json:"markers"`
	}{Markers: []MarkerInfo{}}
	t.mu.Lock()
	n := t.nmarkers
	since = min(since, n)
	from := max(since, n-uint64(len(t.markers)))
	out.Total = n
	match := func(k uint64) (MarkerInfo, bool) {
		mk := &t.markers[k%uint64(s.cfg.Markers)]
		isLog := strings.HasPrefix(mk.key, LogPrefix)
		if kind == "log" && !isLog || kind == "marker" && isLog {
			return MarkerInfo{}, false
		}
		if q != "" && !strings.Contains(strings.ToLower(mk.key), q) && !strings.Contains(strings.ToLower(mk.value), q) {
			return MarkerInfo{}, false
		}
		return MarkerInfo{N: k, Seq: mk.seq, At: mk.at, Log: isLog, Key: mk.key, Value: mk.value}, true
	}
	if oldest {
		// The oldest matches first: next continues after them.
		k := from
		for ; k < n && uint64(len(out.Markers)) < limit; k++ {
			if m, ok := match(k); ok {
				out.Markers = append(out.Markers, m)
			}
		}
		out.Next = k
		out.Skipped = from - since
	} else {
		// The newest matches (what a live page shows): older ones are
		// passed over.
		k := n
		for ; k > from && uint64(len(out.Markers)) < limit; k-- {
			if m, ok := match(k - 1); ok {
				out.Markers = append(out.Markers, m)
			}
		}
		slices.Reverse(out.Markers)
		out.Next = n
		out.Skipped = k - since
	}
	t.mu.Unlock()
	writeJSON(w, out)
}
