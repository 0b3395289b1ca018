package jni

/*
#include <stdlib.h>
#include <stdint.h>
#include "tpj.h"
*/
import "C"

import (
	"archive/zip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/jvm/instrument"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// probeJar is the generated jar holding io.tadpole.Probe and its nested
// classes, on the boot class path; removed once they are loaded.
var probeJar string

// tpjGoProbeJar writes the probe jar and its path (NUL-terminated) into
// path, at most n bytes. It returns 0, or -1.
//
//export tpjGoProbeJar
func tpjGoProbeJar(path *C.char, n C.int) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			rc = -1
		}
	}()
	p, err := writeProbeJar()
	if err != nil || len(p)+1 > int(n) {
		return -1
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(path)), int(n))
	copy(dst, p)
	dst[len(p)] = 0
	probeJar = p
	return 0
}

// tpjGoProbeJarDone removes the probe jar: its classes are loaded.
//
//export tpjGoProbeJarDone
func tpjGoProbeJarDone() {
	defer func() { recover() }()
	if probeJar != "" {
		os.RemoveAll(filepath.Dir(probeJar))
		probeJar = ""
	}
}

// writeProbeJar writes the embedded Probe classes into a jar in a new
// temporary directory and returns its path.
func writeProbeJar() (string, error) {
	ents, err := classes.ReadDir("classes/io/tadpole")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tadpole-probe-")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "tadpole-probe.jar")
	f, err := os.Create(p)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	z := zip.NewWriter(f)
	n := 0
	for _, e := range ents {
		name := e.Name()
		if name != "Probe.class" && !strings.HasPrefix(name, "Probe$") {
			continue
		}
		b, err := classes.ReadFile("classes/io/tadpole/" + name)
		if err == nil {
			var w interface{ Write([]byte) (int, error) }
			if w, err = z.Create("io/tadpole/" + name); err == nil {
				_, err = w.Write(b)
			}
		}
		if err != nil {
			f.Close()
			os.RemoveAll(dir)
			return "", err
		}
		n++
	}
	err = errors.Join(z.Close(), f.Close())
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: io/tadpole/Probe", ErrNoClass)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return p, nil
}

// tpjGoProbeOptions takes the method-tracing options out of the agent's
// options string (trace=…, whose patterns may be separated by commas) and
// returns the rest, malloc'd.
//
//export tpjGoProbeOptions
func tpjGoProbeOptions(opts *C.char) (rest *C.char) {
	defer func() {
		if r := recover(); r != nil {
			rest = nil
		}
	}()
	s := ""
	if opts != nil {
		s = C.GoString(opts)
	}
	env, _ := os.LookupEnv("TADPOLE_TRACE")
	r, pol, err := splitProbeOptions(s, env)
	if err != nil {
		host.Log(r, host.LevelWarn, "jvm:trace", "jvm: "+err.Error())
	}
	policy.Store(pol)
	setSites(r)
	return C.CString(r)
}

// julOrder is the option jul_order=on: JUL records keep their order with
// the thread's traced calls, at a cost per record (docs/jvm-tracing.md).
var julOrder atomic.Bool

// tpjGoJulOrder reports whether jul_order=on.
//
//export tpjGoJulOrder
func tpjGoJulOrder() C.int {
	if julOrder.Load() {
		return 1
	}
	return 0
}

// tpjGoProbeOff reports whether method tracing is off (trace=none).
//
//export tpjGoProbeOff
func tpjGoProbeOff() C.int {
	if policy.Load().off {
		return 1
	}
	return 0
}

// splitProbeOptions separates trace= from the agent's options. env is
// TADPOLE_TRACE (the option wins).
func splitProbeOptions(s, env string) (rest string, p *classPolicy, err error) {
	var keep, trace []string
	inTrace := false
	for _, kv := range strings.Split(s, ",") {
		t := strings.TrimSpace(kv)
		k, v, ok := strings.Cut(t, "=")
		switch {
		case ok && strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(k), "-", "_"), "trace"):
			inTrace = true
			trace = append(trace[:0], v)
		case ok && strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(k), "-", "_"), "jul_order"):
			inTrace = false
			julOrder.Store(strings.EqualFold(strings.TrimSpace(v), "on"))
		case !ok && inTrace && t != "":
			trace = append(trace, t)
		default:
			inTrace = false
			if t != "" {
				keep = append(keep, t)
			}
		}
	}
	spec := env
	if trace != nil {
		spec = strings.Join(trace, ",")
	}
	p, err = newClassPolicy(spec)
	return strings.Join(keep, ","), p, err
}

// A classPolicy says which classes get probes.
type classPolicy struct {
	off        bool // trace=none
	include    []*regexp.Regexp
	exclude    []*regexp.Regexp
	hasInclude bool
}

// policy is the trace option's policy (the default until Agent_OnLoad).
var policy atomic.Pointer[classPolicy]

func init() { policy.Store(&classPolicy{}) }

// ErrBadTrace reports a trace= pattern that is not a valid glob.
var ErrBadTrace = errors.New("jni: bad trace pattern")

// newClassPolicy parses a trace spec: comma-separated globs over internal
// (or dotted) class names, '!' in front to exclude; * is any run of
// characters but '/', ** any run, ? one character but '/'. "none" turns
// method tracing off. Empty is the default: application classes.
func newClassPolicy(spec string) (*classPolicy, error) {
	p := &classPolicy{}
	var errs []error
	for _, g := range strings.Split(spec, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if g == "none" || g == "off" {
			p.off = true
			continue
		}
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		re, err := globRegexp(g)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if neg {
			p.exclude = append(p.exclude, re)
		} else {
			p.include = append(p.include, re)
			p.hasInclude = true
		}
	}
	return p, errors.Join(errs...)
}

func globRegexp(g string) (*regexp.Regexp, error) {
	g = strings.ReplaceAll(g, ".", "/")
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadTrace, g, err)
	}
	return re, nil
}

// jdkPrefixes name the JDK's packages: left alone by default.
var jdkPrefixes = []string{"java/", "javax/", "jdk/", "sun/", "com/sun/", "org/w3c/", "org/xml/", "org/ietf/",
	"org/jcp/", "netscape/"}

// never are classes no policy traces: the agent's own, and those the
// probes' path uses or that break when transformed (instrument.DefaultExclude).
func never(name string) bool {
	if strings.HasPrefix(name, "io/tadpole/") {
		return true
	}
	for _, p := range instrument.DefaultExclude {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// wants reports whether class name (boot: defined by the bootstrap loader)
// gets probes under this policy alone.
func (p *classPolicy) wants(name string, boot bool) bool {
	if p.off || never(name) {
		return false
	}
	for _, re := range p.exclude {
		if re.MatchString(name) {
			return false
		}
	}
	if p.hasInclude {
		for _, re := range p.include {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
	if boot {
		return false
	}
	for _, pre := range jdkPrefixes {
		if strings.HasPrefix(name, pre) {
			return false
		}
	}
	return true
}

// hqFilters are HQ's inclusions and exclusions, compiled once per change.
type hqFilters struct {
	excl, incl     []string
	exclRe, inclRe []*regexp.Regexp
}

var hqCache struct {
	sync.Mutex
	f *hqFilters
}

// currentHQFilters returns the compiled filters of the active run (nil
// when none or empty). A regex Go cannot compile is left out.
func currentHQFilters() *hqFilters {
	excl, incl, ok := host.ClassFilters()
	if !ok || len(excl)+len(incl) == 0 {
		return nil
	}
	hqCache.Lock()
	defer hqCache.Unlock()
	if f := hqCache.f; f != nil && slices.Equal(f.excl, excl) && slices.Equal(f.incl, incl) {
		return f
	}
	f := &hqFilters{excl: append([]string(nil), excl...), incl: append([]string(nil), incl...)}
	comp := func(src []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, s := range src {
			// Java's lookingAt: anchored at the start only.
			if re, err := regexp.Compile(`^(?:` + s + `)`); err == nil {
				out = append(out, re)
			} else {
				host.Log("", host.LevelWarn, "jvm:hqre:"+s, fmt.Sprintf("jvm: HQ class pattern %q ignored: %v", s, err))
			}
		}
		return out
	}
	f.exclRe, f.inclRe = comp(excl), comp(incl)
	hqCache.f = f
	return f
}

// traced decides on a class: HQ's inclusions first (they override the
// rest), then HQ's exclusions, then the trace option or the default.
func traced(name string, boot bool) bool {
	pol := policy.Load()
	if pol.off || never(name) {
		return false
	}
	if f := currentHQFilters(); f != nil {
		for _, re := range f.inclRe {
			if re.MatchString(name) {
				return true
			}
		}
		for _, re := range f.exclRe {
			if re.MatchString(name) {
				return false
			}
		}
	}
	return pol.wants(name, boot)
}

// leaves gives leaf methods their one probe (instrument.Config.Leaves);
// TADPOLE_LEAVES=off turns it off, to compare.
var leaves = os.Getenv("TADPOLE_LEAVES") != "off"

// leafCallClasses are the classes whose static methods with primitive
// arguments a leaf method may call (Integer.compare, Math.max…): they
// call no method of the program back, and while the policy leaves them
// untraced they record nothing.
var leafCallClasses = []string{
	"java/lang/Math", "java/lang/StrictMath", "java/lang/Integer", "java/lang/Long", "java/lang/Short",
	"java/lang/Byte", "java/lang/Character", "java/lang/Boolean", "java/lang/Float", "java/lang/Double",
}

// leafCall is instrument.Config.LeafCalls.
func leafCall(class, name, desc string) bool {
	if !slices.Contains(leafCallClasses, class) || traced(class, true) {
		return false
	}
	end := strings.IndexByte(desc, ')')
	return strings.HasPrefix(desc, "(") && end > 0 && !strings.ContainsAny(desc[1:end], "L[")
}

// instrumenters are per-goroutine rewriters (an Instrumenter is not safe
// for concurrent use).
var instrumenters = sync.Pool{New: func() any {
	cfg := instrument.DefaultConfig()
	cfg.PassThrowable = true
	cfg.PackedWords = true
	cfg.Leaves = leaves
	cfg.LeafCalls = leafCall
	cfg.Exclude = append(cfg.Exclude, "io/tadpole/")
	cfg.MethodSig = func(class, name, desc string, access int, sig string) (int32, bool) {
		return agent.NewMethod(sig).ID(), true
	}
	siteConfig(&cfg)
	x, err := instrument.New(&cfg)
	if err != nil {
		return nil
	}
	return x
}}

// siteInstrumenters are the rewriters of classes that get call-site
// probes only (instrument.Config.SitesOnly; see sites.go).
var siteInstrumenters = sync.Pool{New: func() any {
	cfg := instrument.DefaultConfig()
	cfg.Exclude = append(cfg.Exclude, "io/tadpole/")
	siteConfig(&cfg)
	if cfg.SiteID == nil {
		return nil
	}
	cfg.SitesOnly = true
	x, err := instrument.New(&cfg)
	if err != nil {
		return nil
	}
	return x
}}

// tpjGoTransform is the class file load hook's Go side: it rewrites the
// class when the policy selects it (methods: classes get method probes
// now), or, when it may call java.util.logging (logs) and no method of it
// is traced, with call-site probes only. It returns 1 with the new class
// file in *out (malloc'd, *outLen bytes), or 0 to leave the class as it is.
//
//export tpjGoTransform
func tpjGoTransform(name *C.char, boot, redefined, methods, logs C.int, data unsafe.Pointer, n C.int, out *unsafe.Pointer,
	outLen *C.int) (rc C.int) {
	cname := ""
	defer func() {
		if r := recover(); r != nil {
			if methods != 0 {
				report(bytefrog.MsgClassTransformFailed, cname)
			}
			rc = 0
		}
	}()
	cname = C.GoString(name)
	if methods == 0 || !traced(cname, boot != 0) {
		if methods != 0 && boot == 0 && !isJDK(cname) && redefined == 0 {
			report(bytefrog.MsgClassIgnored, cname)
		}
		if logs == 0 || !sitesWanted(cname, boot != 0) || n <= 0 || data == nil {
			return 0
		}
		// Not traced: call sites only, which HQ is not told of (a run that
		// traces the class retransforms it with its method probes).
		b, _, err := transformWith(&siteInstrumenters, unsafe.Slice((*byte)(data), int(n)))
		if err != nil || b == nil {
			return 0
		}
		transformed.Store(cname, struct{}{})
		return cBytes(b, out, outLen)
	}
	if n <= 0 || data == nil {
		return 0
	}
	in := unsafe.Slice((*byte)(data), int(n))
	b, partial, err := transform(in)
	kind := bytefrog.MsgClassTransformed
	switch {
	case err != nil || partial:
		kind = bytefrog.MsgClassTransformFailed
	case b == nil:
		kind = bytefrog.MsgClassIgnored
	}
	if b != nil {
		transformed.Store(cname, struct{}{})
		if rc = cBytes(b, out, outLen); rc == 0 {
			return 0
		}
	}
	report(kind, cname)
	return rc
}

// cBytes copies b into C memory for the hook: 1, or 0 when out of memory.
func cBytes(b []byte, out *unsafe.Pointer, outLen *C.int) C.int {
	p := C.malloc(C.size_t(len(b)))
	if p == nil {
		return 0
	}
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	*out, *outLen = p, C.int(len(b))
	return 1
}

func isJDK(name string) bool {
	for _, pre := range jdkPrefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// transform rewrites one class. out is nil when nothing was instrumented;
// partial reports methods left alone (too large, unsupported constructor
// flow); err a class that could not be rewritten, which loads unchanged.
func transform(in []byte) (out []byte, partial bool, err error) {
	return transformWith(&instrumenters, in)
}

// transformWith is transform with a rewriter of pool.
func transformWith(pool *sync.Pool, in []byte) (out []byte, partial bool, err error) {
	x, _ := pool.Get().(*instrument.Instrumenter)
	if x == nil {
		return nil, false, ErrNoInstrumenter
	}
	defer pool.Put(x)
	b, res, err := x.InstrumentClass(in)
	if err != nil {
		return nil, false, err
	}
	if res != nil {
		partial = res.Instrumented() < len(res.Methods)
	}
	if b == nil {
		return nil, partial, nil
	}
	// The rewriter reuses its buffers for the next class.
	return append([]byte(nil), b...), partial, nil
}

// tpjGoProbeConverter starts the converter: one goroutine that hands the
// probe buffers threads queue (probe.c) to the agent (host.SubmitProbes,
// whose drain encodes the words into wire messages), so that a traced
// thread pays a copy per buffer, not the agent's work. It returns 0,
// or -1 (threads then convert their buffers themselves).
//
//export tpjGoProbeConverter
func tpjGoProbeConverter() (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			rc = -1
		}
	}()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return -1
	}
	r := os.NewFile(uintptr(p[0]), "tadpole-probes")
	C.tpj_q_set_fd(C.int(p[1]))
	go convertProbes(r)
	return 0
}

// convertProbes is the converter: while the queue is empty it waits on r,
// in Go (no C call under way, so its P stays free). It lives as long as
// the process.
func convertProbes(r *os.File) {
	defer func() {
		if recover() != nil {
			C.tpj_q_set_fd(-1) // threads convert their own buffers from now on
			C.tpj_q_drain()
		}
	}()
	var buf [64]byte
	for {
		if C.tpj_q_drain() > 0 || C.tpj_q_idle() != 0 {
			continue
		}
		if _, err := r.Read(buf[:]); err != nil {
			C.tpj_q_set_fd(-1)
			C.tpj_q_drain()
			return
		}
	}
}

// tpjGoProbeFlush hands a thread's probe words to the agent.
//
//export tpjGoProbeFlush
func tpjGoProbeFlush(tid C.int64_t, p *C.int64_t, n C.int) {
	defer func() { recover() }()
	if n <= 0 || p == nil {
		return
	}
	ev := unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))
	host.SubmitProbes(uint64(tid), ev)
}

// tpjGoProbeHand lends a thread's probe words, in hand-over buffer token
// (probe.c), to the agent (host.HandProbes): it reports 1 when the agent
// took them (it gives token back through tpj_q_release once it has read
// them), 0 when the caller keeps the buffer.
//
//export tpjGoProbeHand
func tpjGoProbeHand(tid C.int64_t, p *C.int64_t, n C.int, token unsafe.Pointer) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			rc = 0
		}
	}()
	if n <= 0 || p == nil || token == nil {
		return 0
	}
	ev := unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))
	if host.HandProbes(uint64(tid), ev, (*handOver)(token)) {
		return 1
	}
	return 0
}

// handOver is a buffer of probe.c's hand-over pool (struct tpj_pbuf), lent
// to the agent.
type handOver struct{}

// Release gives the buffer back to the pool.
func (b *handOver) Release() { C.tpj_q_release(unsafe.Pointer(b)) }

// tpjGoExcType registers an exception class name (Class.getName) and
// returns its id.
//
//export tpjGoExcType
func tpjGoExcType(name *C.char) (id C.int) {
	defer func() {
		if r := recover(); r != nil {
			id = 0
		}
	}()
	return C.int(agent.NewExceptionType(C.GoString(name)).ID())
}

// transformed holds the names of the classes given probes (or call sites
// only) so far: a retransformation revisits them, so that a class the
// policy no longer selects loses its probes, and one rewritten with call
// sites only gets its method probes when a run traces it.
var transformed sync.Map

// tpjGoRetransformWanted reports whether a loaded class (boot: of the
// bootstrap loader) is to be retransformed: the policy selects it now, or
// it was given probes before.
//
//export tpjGoRetransformWanted
func tpjGoRetransformWanted(name *C.char, boot C.int) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			rc = 0
		}
	}()
	n := C.GoString(name)
	if _, ok := transformed.Load(n); ok || traced(n, boot != 0) {
		return 1
	}
	return 0
}

// classReport is a class report made while no run was on, sent when one
// begins.
type classReport struct {
	kind bytefrog.MsgType
	name string
}

// maxPendingReports bounds the reports kept for a run to come.
const maxPendingReports = 16384

var pendingReports struct {
	sync.Mutex
	list []classReport
}

// report sends a class report to HQ, or keeps it for the next run when
// none is on.
func report(kind bytefrog.MsgType, name string) {
	if host.ReportClass(kind, name) {
		return
	}
	pendingReports.Lock()
	if len(pendingReports.list) < maxPendingReports {
		pendingReports.list = append(pendingReports.list, classReport{kind, name})
	}
	pendingReports.Unlock()
}

// sendPending sends the reports kept while no run was on, pacing itself
// on the control queue; those it cannot send stay for the next run.
func sendPending() {
	pendingReports.Lock()
	list := pendingReports.list
	pendingReports.list = nil
	pendingReports.Unlock()
	for i, r := range list {
		sent := false
		for try := 0; try < 100 && !sent; try++ {
			if sent = host.ReportClass(r.kind, r.name); !sent {
				if _, _, on := host.ClassFilters(); !on {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		if !sent {
			pendingReports.Lock()
			pendingReports.list = append(list[i:len(list):len(list)], pendingReports.list...)
			pendingReports.Unlock()
			return
		}
	}
}

// appliedFilters is the last set of HQ class filters the loaded classes
// were retransformed for ("" none).
var appliedFilters atomic.Value

func init() {
	appliedFilters.Store("")
	host.AddModeHook(func(m bytefrog.Mode) {
		if m != bytefrog.ModeTracing {
			return
		}
		pendingReports.Lock()
		pending := len(pendingReports.list) > 0
		pendingReports.Unlock()
		if pending {
			go sendPending()
		}
		excl, incl, _ := host.ClassFilters()
		key := strings.Join(excl, "\x00") + "\x01" + strings.Join(incl, "\x00")
		if len(excl)+len(incl) == 0 {
			key = ""
		}
		if appliedFilters.Swap(key) != key {
			C.tpj_probe_want_retransform()
		}
	})
}
